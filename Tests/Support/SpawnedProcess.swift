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
        var child: pid_t = 0
        guard posix_spawn(&child, executable, &actions, nil, argv, envp) == 0 else { throw CocoaError(.executableLoad) }
        pid = child
    }

    deinit { stop() }

    /// Whether the child still runs.
    public var isRunning: Bool {
        guard !reaped else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            reaped = true
            return false
        }
        return true
    }

    /// Sends `signal` and waits for the child to end.
    public func stop(signal: Int32 = SIGTERM) {
        guard !reaped else { return }
        kill(pid, signal)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        reaped = true
    }
}
