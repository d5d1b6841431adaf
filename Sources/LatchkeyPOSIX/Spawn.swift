import CPOSIX
import Glibc

/// Starting programs with `posix_spawn`, and reaping them. The product's children (pinentry, an agent the
/// CLI starts) and the tests' children (Tests/Support/ChildProcess) are all started here.
package enum Spawn {
    /// Where one of the child's standard descriptors comes from or goes.
    package enum Stream: Sendable, Equatable {
        /// /dev/null.
        case null
        /// A copy of this process's descriptor (a pipe's end); the original is not inherited.
        case descriptor(FileDescriptor)
        /// A file, appended to (created 0600 when missing).
        case appending(String)
        /// The same as the child's standard output (for standard error).
        case standardOutput
    }

    /// How a child starts.
    package struct Options: Sendable {
        /// The child's standard input (never this process's own: it may be a terminal).
        package var standardInput: Stream = .null
        /// The child's standard output.
        package var standardOutput: Stream = .null
        /// The child's standard error.
        package var standardError: Stream = .standardOutput
        /// A new session, detached from this process's terminal (`POSIX_SPAWN_SETSID`).
        package var newSession = false
        /// The pseudo-terminal slave (a path) that becomes the new session's controlling terminal and the
        /// child's standard input, output and error, replacing the three streams above; needs `newSession`.
        package var controllingTerminal: String?
        /// Close every descriptor above 2 that this process has open, close-on-exec or not, so a child
        /// holds none of them: a pipe a parent waits on, a lock, or a socket another thread opened without
        /// close-on-exec an instant before (tpm2-tss's, for one) — closed in the child, so no race.
        package var closeInheritedDescriptors = false
        /// Start with an empty signal mask and default dispositions for the signals a child must obey
        /// (the test runner's threads block some of them).
        package var resetSignals = true
        /// The directory the child starts in (nil: this process's).
        package var currentDirectory: String?

        /// Options with every field at its default; with `outputPath`, standard output and standard
        /// error are both appended to that file.
        package init(outputPath: String? = nil, newSession: Bool = false, closeInheritedDescriptors: Bool = false) {
            if let outputPath { standardOutput = .appending(outputPath) }
            self.newSession = newSession
            self.closeInheritedDescriptors = closeInheritedDescriptors
        }
    }

    /// Starts `executable` with `arguments` (without the program name) and exactly `environment`.
    /// Returns the child's pid.
    package static func start(
        _ executable: String, _ arguments: [String], environment: [String: String], options: Options = Options()
    ) throws(Errno) -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let terminal = options.controllingTerminal {
            // Opened (without O_NOCTTY) by the new session's leader: it becomes its controlling terminal.
            posix_spawn_file_actions_addopen(&actions, 0, terminal, O_RDWR, 0)
            posix_spawn_file_actions_adddup2(&actions, 0, 1)
            posix_spawn_file_actions_adddup2(&actions, 0, 2)
        } else {
            add(options.standardInput, as: 0, to: &actions)
            add(options.standardOutput, as: 1, to: &actions)
            add(options.standardError, as: 2, to: &actions)
        }
        if let directory = options.currentDirectory {
            let added = latchkey_spawn_add_chdir(&actions, directory)
            guard added == 0 else { throw Errno(added) }
        }
        if options.closeInheritedDescriptors {
            // Last: the streams above were copied from descriptors this closes.
            let added = latchkey_spawn_add_close_from(&actions, 3)
            guard added == 0 else { throw Errno(added) }
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
            for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD, SIGTTIN, SIGTTOU] { sigaddset(&defaults, signal) }
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

    private static func add(_ stream: Stream, as target: Int32, to actions: inout posix_spawn_file_actions_t) {
        switch stream {
        case .null:
            posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
        case .descriptor(let fd):
            // dup2 clears close-on-exec on the copy; the original closes at exec when it is close-on-exec.
            posix_spawn_file_actions_adddup2(&actions, fd.rawValue, target)
        case .appending(let file):
            posix_spawn_file_actions_addopen(&actions, target, file, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        case .standardOutput:
            posix_spawn_file_actions_adddup2(&actions, 1, target)
        }
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

    /// Asks the child to stop (SIGTERM).
    package static func terminate(_ pid: Int32) { kill(pid, SIGTERM) }

    private static func termination(_ status: Int32) -> Termination {
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signaled(signal)
    }
}
