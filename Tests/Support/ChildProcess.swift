import CPseudoTerminal
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The one place the tests start programs. Every child runs in a session of its own (`POSIX_SPAWN_SETSID`)
/// with no controlling terminal and a standard input that is never the runner's, so nothing a test spawns —
/// `latchkey`, `latchkeyd`, a sync command, psql, openssl, a Python helper, and whatever those start in
/// turn — can find the terminal of the person running the suite: a prompt there would stop the child
/// (SIGTTIN, as a background process group) or wait for typing that never comes, and the run would hang.
/// Opening `/dev/tty` fails instead (ENXIO), which the programs report as "no terminal".
///
/// The exception is a test that drives a pseudo-terminal of its own (`PseudoTerminalSession`): its child
/// leads a new session too, and the pseudo-terminal becomes that session's controlling terminal.
///
/// `HelperProcess.run`, `SpawnedProcess` and `PseudoTerminalSession` spawn through here; a test never
/// uses Foundation's `Process` (which leaves the child in the runner's session, on its terminal).
public enum ChildProcess {
    /// Where one of the child's standard descriptors comes from or goes.
    public enum Stream {
        /// /dev/null.
        case null
        /// A copy of this process's descriptor (a pipe's end).
        case descriptor(Int32)
        /// A file, appended to (created 0600 when missing).
        case appending(String)
        /// The same as the child's standard output (for standard error).
        case standardOutput
    }

    /// Whether the child's new session gets a controlling terminal.
    public enum Terminal {
        /// None: `/dev/tty` cannot be opened.
        case none
        /// The pseudo-terminal slave at this path, as standard input, output and error and as the session's
        /// controlling terminal.
        case pseudoTerminal(String)
    }

    /// Spawns `path` with `arguments` (after the program's name) and exactly `environment`, in a new
    /// session; returns its pid. `closing` are descriptors of this process the child must not keep
    /// (the far ends of its pipes, when they are not close-on-exec).
    public static func spawn(
        _ path: String, _ arguments: [String], environment: [String: String], standardInput: Stream = .null,
        standardOutput: Stream = .null, standardError: Stream = .null, terminal: Terminal = .none,
        currentDirectory: String? = nil, closing: [Int32] = []
    ) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        switch terminal {
        case .none:
            // Standard input is never inherited: the runner's may be the terminal.
            add(standardInput, as: 0, to: &actions, readOnly: true)
            add(standardOutput, as: 1, to: &actions, readOnly: false)
            add(standardError, as: 2, to: &actions, readOnly: false)
        case .pseudoTerminal(let slave):
            // Opened (without O_NOCTTY) by the new session's leader: it becomes its controlling terminal.
            posix_spawn_file_actions_addopen(&actions, 0, slave, O_RDWR, 0)
            posix_spawn_file_actions_adddup2(&actions, 0, 1)
            posix_spawn_file_actions_adddup2(&actions, 0, 2)
        }
        for fd in closing { posix_spawn_file_actions_addclose(&actions, fd) }
        if let currentDirectory {
            guard latchkey_test_spawn_add_chdir(&actions, currentDirectory) == 0 else { throw POSIXError(.EINVAL) }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        resetSignals(&attributes)
        var flags: Int16 = 0
        posix_spawnattr_getflags(&attributes, &flags)
        posix_spawnattr_setflags(&attributes, flags | latchkey_test_spawn_new_session_flag())
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EIO) }
        return pid
    }

    private static func add(_ stream: Stream, as target: Int32, to actions: inout posix_spawn_file_actions_t, readOnly: Bool) {
        switch stream {
        case .null:
            posix_spawn_file_actions_addopen(&actions, target, "/dev/null", readOnly ? O_RDONLY : O_WRONLY, 0)
        case .descriptor(let fd):
            // dup2 clears close-on-exec on the copy; the original closes at exec when it is close-on-exec.
            posix_spawn_file_actions_adddup2(&actions, fd, target)
        case .appending(let file):
            posix_spawn_file_actions_addopen(&actions, target, file, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        case .standardOutput:
            posix_spawn_file_actions_adddup2(&actions, 1, target)
        }
    }

    /// A clean signal state for a child: the test runner's threads block and ignore signals that a child
    /// must obey (one that inherits a blocked SIGTERM cannot be stopped).
    static func resetSignals(_ attributes: inout posix_spawnattr_t) {
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD, SIGTTIN, SIGTTOU] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    }
}
