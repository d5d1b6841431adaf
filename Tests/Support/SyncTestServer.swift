import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// How a test's devices reach the sync server: straight to PostgreSQL, or through PgBouncer in
/// transaction pooling mode (`latchkey_mode=pooled`). Every sync test runs in both.
public enum SyncConnection: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case direct
    case pooled
    public var testDescription: String { rawValue }
}

/// PgBouncer from Debian in front of a test's PostgreSQL, started by pid as the server's user (PgBouncer
/// refuses root): a configuration the test writes, listening only on a Unix socket (port 6432) in the
/// cluster's directory, `pool_mode = transaction`, `auth_type = trust` with the roles in its user list,
/// every database passed through. A client waits at most 2 s for a server connection
/// (`query_wait_timeout`), so a test whose server is down is not held for PgBouncer's default 2 minutes.
public final class PgBouncer: @unchecked Sendable {
    // @unchecked: started and stopped from the test's thread only.
    public static let executable = "/usr/sbin/pgbouncer"
    public let directory: String
    public let port = 6432
    private var process: SpawnedProcess?
    private let configuration: String
    private let asNobody = geteuid() == 0

    /// Starts PgBouncer for the PostgreSQL whose socket is in `directory` (port 5432), knowing `users`.
    public init(directory: String, users: [String] = ["latchkey", "latchkey_device"], settings: [String: String] = [:])
        throws
    {
        self.directory = directory
        configuration = directory + "/pgbouncer.ini"
        let userList = directory + "/pgbouncer-users.txt"
        try Data(users.map { "\"\($0)\" \"\"\n" }.joined().utf8).write(to: URL(fileURLWithPath: userList))
        var options: [String: String] = [
            "listen_addr": "", "unix_socket_dir": directory, "listen_port": String(port), "auth_type": "trust",
            "auth_file": userList,
            "pool_mode": "transaction", "max_client_conn": "500", "default_pool_size": "10", "server_login_retry": "1",
            "query_wait_timeout": "2", "ignore_startup_parameters": "extra_float_digits",
        ]
        options.merge(settings) { $1 }
        let text =
            "[databases]\n* = host=\(directory) port=5432\n\n[pgbouncer]\n"
            + options.sorted { $0.key < $1.key }.map { "\($0.key) = \($0.value)\n" }.joined()
        try Data(text.utf8).write(to: URL(fileURLWithPath: configuration))
        try start()
    }

    deinit { process?.stop() }

    /// The socket's path.
    public var socket: String { directory + "/.s.PGSQL.\(port)" }

    /// Starts PgBouncer and waits until its socket accepts connections.
    public func start() throws {
        process = try SpawnedProcess(
            asNobody ? "/usr/bin/setpriv" : Self.executable,
            (asNobody ? ["--reuid=65534", "--regid=65534", "--clear-groups", Self.executable] : []) + [configuration],
            environment: ["PATH": "/usr/bin:/bin", "LANG": "C"], log: directory + "/pgbouncer.log")
        // A connection, not the socket file: the file exists from bind(), before listen() (a connection then
        // is refused), and one left by a killed PgBouncer exists before the new one binds.
        try waitUntil("PgBouncer listens", seconds: 10) { Self.accepts(socket) }
    }

    /// Whether a Unix socket at `path` accepts a connection now.
    static func accepts(_ path: String) -> Bool {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in bytes.enumerated() { buffer[index] = byte }
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
    }

    /// Stops PgBouncer by pid (SIGINT: a safe shutdown, closing every client; SIGKILL with `crash`).
    public func stop(crash: Bool = false) {
        process?.stop(signal: crash ? SIGKILL : SIGINT)  // Waits for it to exit.
        process = nil
        unlink(socket)  // Left behind by a crash; start waits for the new one.
    }
}

/// A test's sync server: its own PostgreSQL, and with `.pooled` PgBouncer in front of it. `conninfo` is
/// what the devices are given; `psql`, `stop` and `start` act on PostgreSQL itself (PgBouncer stays up,
/// as it does in front of a server that restarts).
public final class SyncTestServer: @unchecked Sendable {
    // @unchecked: used from the test's thread (and the cluster's own rules).
    public let cluster: PostgresCluster
    public let connection: SyncConnection
    public let bouncer: PgBouncer?

    public init(_ connection: SyncConnection, durable: Bool = false) throws {
        cluster = try PostgresCluster(durable: durable)
        self.connection = connection
        bouncer = connection == .pooled ? try PgBouncer(directory: cluster.directory) : nil
    }

    /// The connection string devices get (as the role `latchkey`, database `latchkey`).
    public var conninfo: String { conninfo(user: "latchkey", database: "latchkey") }

    /// A connection string for `user` and `database`, direct or through PgBouncer as the test runs.
    public func conninfo(user: String, database: String) -> String {
        switch connection {
        case .direct: "host=\(cluster.directory) port=5432 user=\(user) dbname=\(database) connect_timeout=5"
        case .pooled:
            "host=\(cluster.directory) port=6432 user=\(user) dbname=\(database) connect_timeout=5 latchkey_mode=pooled"
        }
    }

    /// The socket devices connect to (PostgreSQL's or PgBouncer's).
    public var socket: String { bouncer?.socket ?? cluster.directory + "/.s.PGSQL.5432" }

    /// The cluster's directory (its data directory is `data/` in it).
    public var directory: String { cluster.directory }

    @discardableResult
    public func psql(_ sql: String, database: String = "latchkey") throws -> String {
        try cluster.psql(sql, database: database)
    }

    public func stop(crash: Bool = false) { cluster.stop(crash: crash) }

    public func start() throws { try cluster.start() }
}
