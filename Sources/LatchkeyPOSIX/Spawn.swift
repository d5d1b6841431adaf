import CPOSIX
import Glibc

/// Starting programs with `posix_spawn`, and reaping them.
package enum Spawn {
    /// How a child starts.
    package struct Options: Sendable {
        /// Where standard output and standard error go (appended, created 0600): nil for /dev/null.
        package var outputPath: String?
        /// A new session, detached from this process's terminal (`POSIX_SPAWN_SETSID`).
        package var newSession = false
        /// Close every descriptor above 2 that this process has open, close-on-exec or not, so a child
        /// that outlives this process holds none of them (a pipe a parent waits on, a lock, a socket).
        package var closeInheritedDescriptors = false
        /// Start with an empty signal mask and default dispositions for the signals a child must obey
        /// (the test runner's threads block some of them).
        package var resetSignals = true
        /// A descriptor to become the child's standard input (nil: /dev/null).
        package var standardInput: Int32?
        /// A descriptor to become the child's standard output (nil: `outputPath`, else /dev/null); standard
        /// error then goes to `outputPath`, else /dev/null.
        package var standardOutput: Int32?

        /// Options with every field at its default.
        package init(outputPath: String? = nil, newSession: Bool = false, closeInheritedDescriptors: Bool = false) {
            self.outputPath = outputPath
            self.newSession = newSession
            self.closeInheritedDescriptors = closeInheritedDescriptors
        }
    }

    /// Starts `executable` with `arguments` (without the program name) and exactly `environment`;
    /// standard input is /dev/null unless `options` names one. Returns the child's pid.
    package static func start(
        _ executable: String, _ arguments: [String], environment: [String: String], options: Options = Options()
    ) throws(Errno) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let input = options.standardInput {
            posix_spawn_file_actions_adddup2(&actions, input, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if let output = options.standardOutput {
            posix_spawn_file_actions_adddup2(&actions, output, 1)
            if let log = options.outputPath {
                posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            } else {
                posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
            }
        } else {
            if let output = options.outputPath {
                posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            } else {
                posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
            }
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        if options.closeInheritedDescriptors {
            // No /proc: nothing to enumerate, and close-on-exec descriptors close anyway.
            for name in Files.entries(of: "/proc/self/fd") ?? [] {
                if let fd = Int32(name), fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags: Int16 = 0
        if options.resetSignals {
            var empty = sigset_t()
            sigemptyset(&empty)
            posix_spawnattr_setsigmask(&attributes, &empty)
            var defaults = sigset_t()
            sigemptyset(&defaults)
            for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
            posix_spawnattr_setsigdefault(&attributes, &defaults)
            flags |= Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        }
        if options.newSession { flags |= latchkey_spawn_new_session_flag() }
        posix_spawnattr_setflags(&attributes, flags)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else { throw Errno(result) }
        return pid
    }

    /// How a child ended.
    package enum Termination: Equatable, Sendable {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signaled(Int32)
    }

    /// The child's termination when it has ended (reaping it), nil while it runs.
    package static func poll(_ pid: Int32) -> Termination? {
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
        return termination(status)
    }

    /// Waits for the child to end and reaps it.
    package static func wait(_ pid: Int32) -> Termination? {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return nil }
        }
        return termination(status)
    }

    /// Sends a signal.
    package static func signal(_ pid: Int32, _ signal: Int32) { kill(pid, signal) }

    private static func termination(_ status: Int32) -> Termination {
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
    }
}
