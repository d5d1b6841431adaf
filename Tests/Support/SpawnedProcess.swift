import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A long-running child (an agent, a server) started with posix_spawn and stopped by its pid.
///
/// Foundation's `Process` watches a child through a pipe the child inherits; a daemon that closes
/// inherited descriptors (as `systemd-socket-activate` does) makes it believe the child ended and block in
/// `waitpid` — so long-running children are spawned here instead.
public final class SpawnedProcess: @unchecked Sendable {
    // @unchecked: `pid` is fixed at spawn; `reaped` changes only in `stop`, which tests call from one thread.
    public let pid: pid_t
    private var reaped = false
    /// The wait status (`waitpid`'s) once the child has been reaped.
    public private(set) var waitStatus: Int32?

    /// Spawns `executable` with `arguments` and `environment`; standard output and error go to `log`
    /// (appended) or /dev/null, standard input comes from /dev/null.
    public init(_ executable: String, _ arguments: [String], environment: [String: String], log: String? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let output = log ?? "/dev/null"
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        Self.resetSignals(&attributes)
        var child: pid_t = 0
        guard posix_spawn(&child, executable, &actions, &attributes, argv, envp) == 0 else { throw CocoaError(.executableLoad) }
        pid = child
    }

    deinit { stop() }

    /// A clean signal state for a child: the test runner's threads block and ignore signals that a child
    /// must obey (one that inherits a blocked SIGTERM cannot be stopped).
    static func resetSignals(_ attributes: inout posix_spawnattr_t) {
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    }

    /// Whether the child still runs.
    public var isRunning: Bool {
        guard !reaped else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            reaped = true
            waitStatus = status
            return false
        }
        return true
    }

    /// Sends `signal` and waits for the child to end; a child still running after five seconds is killed,
    /// so a stuck child fails its test instead of hanging the run.
    public func stop(signal: Int32 = SIGTERM) {
        guard !reaped else { return }
        kill(pid, signal)
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(5)
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() >= deadline {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                break
            }
            usleep(5_000)
        }
        reaped = true
    }
}
