import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A PostgreSQL 15 server of the test's own (Debian's binaries): `initdb` in a fresh directory — as the
/// unprivileged user `nobody` when the tests run as root, since initdb refuses root — listening only on a
/// Unix socket in that directory, trust authentication for the role `latchkey`, database `latchkey`.
/// Stopped by pid when released; `stop`/`start`/`kill` let tests take it away mid-sync.
public final class PostgresCluster: @unchecked Sendable {
    // @unchecked: the server process is replaced only by start/stop, which a test calls from one thread.
    public static let binaries = "/usr/lib/postgresql/15/bin"
    /// The directory (owned by the server's user) holding `data/` and the socket.
    public let directory: String
    private var server: SpawnedProcess?
    private let asNobody: Bool

    /// The libpq connection string for the `latchkey` database.
    public var conninfo: String { "host=\(directory) port=5432 user=latchkey dbname=latchkey connect_timeout=5" }

    /// A fresh directory for a cluster, owned by the server's user.
    private static func makeDirectory(asNobody: Bool) throws -> String {
        var template = Array("/tmp/latchkey-pg-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw CocoaError(.fileWriteUnknown) }
        let directory = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
        if asNobody {
            chmod(directory, 0o755)
            chown(directory, 65534, 65534)
        }
        return directory
    }

    /// A streaming-replication standby of `primary`, started: `pg_basebackup -R` of it (WAL streamed),
    /// listening on a socket in a directory of its own, read-only. `settings` are added to its
    /// postgresql.conf (e.g. `recovery_min_apply_delay`, to hold it behind the primary).
    public init(standbyOf primary: PostgresCluster, settings extra: String = "") throws {
        asNobody = geteuid() == 0
        directory = try Self.makeDirectory(asNobody: asNobody)
        try run(
            Self.binaries + "/pg_basebackup",
            [
                "-h", primary.directory, "-p", "5432", "-U", "latchkey", "-D", directory + "/data",
                "-R", "-X", "stream", "-c", "fast", "--no-sync",
            ])
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/data/postgresql.conf"))
        handle.seekToEndOfFile()
        handle.write(Data("unix_socket_directories = '\(directory)'\nhot_standby = on\n\(extra)".utf8))
        try handle.close()
        try start()
    }

    /// Creates and starts a cluster. `durable` keeps fsync on (benchmarks); tests turn it off.
    public init(durable: Bool = false) throws {
        asNobody = geteuid() == 0
        directory = try Self.makeDirectory(asNobody: asNobody)
        try run(
            Self.binaries + "/initdb",
            ["-D", directory + "/data", "-U", "latchkey", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"])
        var settings = "listen_addresses = ''\nunix_socket_directories = '\(directory)'\nmax_connections = 200\n"
        // fsync off loses nothing when only the server's processes crash (the OS keeps the WAL); commits stay synchronous.
        if !durable { settings += "fsync = off\n" }
        let configuration = directory + "/data/postgresql.conf"
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: configuration))
        handle.seekToEndOfFile()
        handle.write(Data(settings.utf8))
        try handle.close()
        try start()
        try run(
            Self.binaries + "/psql",
            ["-h", directory, "-U", "latchkey", "-d", "postgres", "-q", "-c", "CREATE DATABASE latchkey"])
    }

    deinit {
        server?.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts the server and waits until it accepts connections.
    public func start() throws {
        server = try SpawnedProcess(
            asNobody ? "/usr/bin/setpriv" : Self.binaries + "/postgres",
            (asNobody ? ["--reuid=65534", "--regid=65534", "--clear-groups", Self.binaries + "/postgres"] : [])
                + ["-D", directory + "/data"],
            environment: ["PATH": "/usr/bin:/bin", "LANG": "C"], log: directory + "/server.log")
        try waitUntil("PostgreSQL accepts connections", seconds: 30) {
            (try? run(Self.binaries + "/pg_isready", ["-q", "-h", directory, "-p", "5432"])) != nil
        }
    }

    /// Stops the server by pid: a fast shutdown (SIGINT), or with `crash` a SIGKILL of the postmaster and
    /// every child (a machine that died; the next start recovers from the WAL).
    public func stop(crash: Bool = false) {
        guard let server else { return }
        if crash {
            kill(server.pid, SIGSTOP)  // No new children while the old ones go.
            // Without pkill the children exit on their own once the postmaster is gone.
            _ = try? HelperProcess.run(
                "/usr/bin/pkill", ["-KILL", "-P", String(server.pid)], environment: ["PATH": "/usr/bin:/bin"])
            server.stop(signal: SIGKILL)
        } else {
            server.stop(signal: SIGINT)
        }
        self.server = nil
        try? waitUntil("PostgreSQL's processes exit", seconds: 30) {
            (try? run(Self.binaries + "/pg_isready", ["-q", "-h", directory, "-p", "5432"])) == nil
        }
    }

    /// Runs SQL with psql (as the superuser `latchkey`, in `database`) and returns its unaligned, tuples-only output.
    @discardableResult
    public func psql(_ sql: String, database: String = "latchkey") throws -> String {
        try run(
            Self.binaries + "/psql",
            [
                "-h", directory, "-U", "latchkey", "-d", database, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                "-c", sql,
            ])
    }

    /// Runs a PostgreSQL program as the server's user; throws when it fails.
    @discardableResult
    private func run(_ executable: String, _ arguments: [String]) throws -> String {
        let output = try HelperProcess.run(
            asNobody ? "/usr/bin/setpriv" : executable,
            (asNobody ? ["--reuid=65534", "--regid=65534", "--clear-groups", executable] : []) + arguments,
            environment: ["PATH": "/usr/bin:/bin", "LANG": "C"], currentDirectory: "/")
        guard output.status == 0 else {
            throw PostgresClusterError(message: "\(executable) \(arguments.joined(separator: " ")): " + output.stderr)
        }
        return output.stdout
    }
}

/// A PostgreSQL program failed (its standard error).
public struct PostgresClusterError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
