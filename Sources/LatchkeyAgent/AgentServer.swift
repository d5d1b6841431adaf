import CProcessControl
import Foundation
public import Latchkey
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The agent: listens on a Unix socket in a private directory (or on the socket systemd passes), serves
/// each connection on its own thread — so a slow client stalls only itself — and locks the keychain when it
/// has been idle longer than its timeout, or before the system sleeps when its settings say so.
public final class AgentServer: Sendable {
    /// Options from the command line.
    public struct Options: Sendable {
        /// The keychain to serve.
        public var keychainPath: String
        /// The socket to listen on (ignored under socket activation).
        public var socketPath: String
        /// Whether to log to standard error.
        public var verbose: Bool

        /// Creates options.
        public init(keychainPath: String, socketPath: String, verbose: Bool) {
            self.keychainPath = keychainPath
            self.socketPath = socketPath
            self.verbose = verbose
        }
    }

    /// Connections served at once at most; more are closed at once.
    static let maximumConnections = 512

    let options: Options
    let state: AgentState
    private let listener: Int32
    private let active = Mutex(0)
    private let log: @Sendable (String) -> Void

    /// Opens the keychain and the listening socket (or takes systemd's).
    public init(options: Options) throws(KeychainError) {
        let verbose = options.verbose
        let log: @Sendable (String) -> Void = { message in
            if verbose { FileHandle.standardError.write(Data("latchkeyd: \(message)\n".utf8)) }
        }
        self.options = options
        self.log = log
        // Before the keychain opens (the device key's classes unlock at once): no key may reach a core file
        // or another process of the user.
        Self.hardenProcess(log: log)
        self.state = try AgentState(keychainPath: URL(fileURLWithPath: options.keychainPath).standardizedFileURL.path, log: log)
        if let inherited = Self.systemdSocket() {
            listener = inherited
            log("listening on the socket systemd passed")
        } else {
            listener = try Self.listen(at: options.socketPath)
            log("listening on \(options.socketPath)")
        }
    }

    /// Serves forever (until a signal ends the process).
    public func serve() -> Never {
        let idle = Thread { [state] in
            while true {
                Thread.sleep(forTimeInterval: 1)
                state.lockIfIdle()
            }
        }
        idle.start()
        SleepWatcher.start(state: state, log: log)
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED || errno == EMFILE || errno == ENFILE {
                    if errno == EMFILE || errno == ENFILE { Thread.sleep(forTimeInterval: 0.05) }
                    continue
                }
                log("accept failed: \(String(cString: strerror(errno)))")
                Thread.sleep(forTimeInterval: 0.05)
                continue
            }
            let admitted = active.withLock { count in
                guard count < Self.maximumConnections else { return false }
                count += 1
                return true
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)  // Best effort: the agent spawns no programs anyway.
            let stream = AgentStream(descriptor: client)
            guard admitted else { continue }  // Too many connections: this one is closed as `stream` goes.
            let thread = Thread { [self] in
                ConnectionHandler(stream: stream, state: state, log: log).run()
                active.withLock { $0 -= 1 }
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    /// Wipes the keys and removes the socket (at exit).
    public func shutDown() {
        state.wipe()
        if Self.systemdSocket() == nil { unlink(options.socketPath) }
    }

    /// The listening socket systemd passes with socket activation (LISTEN_PID, LISTEN_FDS; fd 3).
    static func systemdSocket() -> Int32? {
        let environment = ProcessInfo.processInfo.environment
        guard let pid = environment["LISTEN_PID"].flatMap({ Int32($0) }), pid == getpid(),
            let count = environment["LISTEN_FDS"].flatMap({ Int($0) }), count >= 1
        else { return nil }
        return 3
    }

    /// Creates the private directory (0700, owned by this user) and listens on the socket (0600). A stale
    /// socket left by a dead agent is replaced; a live agent's is not.
    static func listen(at path: String) throws(KeychainError) -> Int32 {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        if !FileManager.default.fileExists(atPath: directory) {
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                throw KeychainError(.io, "cannot create \(directory): \(String(cString: strerror(errno)))")
            }
        }
        var info = stat()
        guard stat(directory, &info) == 0, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
            throw KeychainError(.writePermission, "\(directory) must be a directory of this user with mode 0700")
        }
        if FileManager.default.fileExists(atPath: path) {
            if AgentStream.connect(path: path) != nil {
                throw KeychainError(.duplicateKeychain, "an agent already listens on \(path)")
            }
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw KeychainError(.io, "cannot create a socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw KeychainError.param("the socket path \(path) is too long")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes + [0]) }
        let previous = umask(0o177)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        umask(previous)
        guard bound == 0, chmod(path, 0o600) == 0, Glibc.listen(fd, 128) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw KeychainError(.io, "cannot listen on \(path): \(reason)")
        }
        return fd
    }

    /// No core dumps (a crash must not write the unlocked keys to disk) and no tracing by other processes of
    /// the same user.
    static func hardenProcess(log: @Sendable (String) -> Void) {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none)  // Best effort; the keys are mlocked regardless.
        // Not dumpable: a process of the same user can no longer ptrace the agent or read its memory through
        // /proc (as ssh-agent does). Only a privileged one can.
        if latchkey_set_not_dumpable() != 0 {
            log("could not mark the process not dumpable: \(String(cString: strerror(errno)))")
        }
    }
}
