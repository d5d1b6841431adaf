import Foundation
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The module's syslog lines: a datagram socket that stands in for /dev/log in the mount namespace a logged
/// pamtester runs in (`PAMSandbox.loggedPamtester`). The machine's own /dev/log is never touched.
final class SyslogCapture: @unchecked Sendable {
    // @unchecked: the descriptor is fixed at creation and read by one test at a time.
    let path: String
    private let fd: Int32
    private var received: [String] = []

    init(at path: String) throws {
        self.path = path
        unlink(path)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw PAMSandbox.Failure("socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw PAMSandbox.Failure("long path") }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw PAMSandbox.Failure("bind \(path): \(errno)") }
        var size: Int32 = 1 << 20  // Room for every line of a test, read when it is over.
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// Every message received so far, as syslog(3) sent it ("<85>Dec  5 10:00:00 pamtester: …").
    var messages: [String] {
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard count > 0 else { break }
            received.append(String(decoding: buffer[0..<count], as: UTF8.self))
        }
        return received
    }

    /// What pam_latchkey logged, in order: the text after "pam_latchkey(service:step): ", prefixed with the
    /// step ("session: the keychain of … stays locked: …").
    var moduleLines: [String] {
        messages.compactMap { message in
            guard let start = message.range(of: "pam_latchkey("),
                let close = message[start.upperBound...].range(of: "): ")
            else { return nil }
            let step = message[start.upperBound..<close.lowerBound].split(separator: ":").last ?? ""
            return "\(step): " + message[close.upperBound...].trimmingCharacters(in: .newlines)
        }
    }
}

extension PAMSandbox {
    /// Runs pamtester as root, as `pamtester` does, but in a mount namespace of its own whose /dev is a small
    /// tmpfs (null, zero, random, urandom) with `log`'s socket as /dev/log, so that the module's syslog lines
    /// can be read. `before` runs in the shell first (`exec 9<file`: a descriptor the login process holds).
    /// Without `runtimeAtAuth`, PAM's environment has no `XDG_RUNTIME_DIR` until the stack sets it (as at a
    /// first login, where pam_systemd sets it in the session step).
    func loggedPamtester(
        _ operations: [String], input: String = "", log: SyslogCapture, before: String = "", timeout: Double = 60,
        runtimeAtAuth: Bool = true
    ) throws -> HelperProcess.Output {
        try HelperProcess.run(
            "/usr/bin/unshare",
            loggedPamtesterArguments(operations, log: log, before: before, runtimeAtAuth: runtimeAtAuth),
            environment: ["PATH": "/usr/bin:/bin:/usr/sbin:/sbin"], input: Data(input.utf8), timeout: timeout)
    }

    /// `loggedPamtester` started without waiting for it (a test that acts while the step runs); standard
    /// output and error go to `output`.
    func startLoggedPamtester(_ operations: [String], input: String, log: SyslogCapture, output: String) throws
        -> SpawnedProcess
    {
        let process = try SpawnedProcess(
            "/usr/bin/unshare", loggedPamtesterArguments(operations, log: log, before: ""),
            environment: ["PATH": "/usr/bin:/bin:/usr/sbin:/sbin"], log: output, input: true)
        process.send(Data(input.utf8))
        return process
    }

    private func loggedPamtesterArguments(
        _ operations: [String], log: SyslogCapture, before: String, runtimeAtAuth: Bool = true
    ) -> [String] {
        let script = """
            set -e
            mount -t tmpfs -o mode=0755,size=64k latchkey-test-dev /dev
            mknod -m 0666 /dev/null c 1 3
            mknod -m 0666 /dev/zero c 1 5
            mknod -m 0666 /dev/random c 1 8
            mknod -m 0666 /dev/urandom c 1 9
            touch /dev/log
            mount --bind "$1" /dev/log
            shift
            \(before)
            exec "$@"
            """
        return ["--mount", "--propagation", "private", "/bin/sh", "-c", script, "sh", log.path, Self.pamtester, "-v"]
            + (runtimeAtAuth ? ["-E", "XDG_RUNTIME_DIR=\(runtime)"] : []) + [service, name] + operations
    }

    /// Starts `program` as the user (its own session, no terminal), standard output and error to `log`.
    func startAsUser(_ program: String, _ arguments: [String], log: String) throws -> SpawnedProcess {
        try SpawnedProcess("/usr/bin/setpriv", asUser(program, arguments), environment: userEnvironment, log: log)
    }

    /// Runs `program` as the user to completion.
    func runAsUser(_ program: String, _ arguments: [String]) throws -> HelperProcess.Output {
        try HelperProcess.run("/usr/bin/setpriv", asUser(program, arguments), environment: userEnvironment)
    }

    /// The pids of the user's running processes whose name (`comm`) is `command`. Not zombies: a tool of the
    /// early derivation that ended is init's to reap, and a first process that reaps nothing (a container's)
    /// leaves it, with its uid, which `useradd` gives the next throwaway user.
    func processes(named command: String) -> [pid_t] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry in
            guard let pid = pid_t(entry), Self.realUser(of: pid) == uid, !Self.isZombie(pid)
            else { return nil }
            let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? ""
            return name.trimmingCharacters(in: .newlines) == command ? pid : nil
        }
    }

    /// The real uid of `pid` (from /proc/<pid>/status, which does not depend on the process being dumpable).
    static func realUser(of pid: pid_t) -> uid_t? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Uid:") })
        else { return nil }
        return line.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().first.flatMap { uid_t($0) }
    }

    /// Whether process `pid` is gone (or a zombie) within `limit`.
    static func ends(_ pid: pid_t, within limit: Duration) -> Bool { PAMModuleTests.ends(pid, within: limit) }
}
