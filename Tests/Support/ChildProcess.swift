import Foundation
import LatchkeyPOSIX

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
    /// session; returns its pid. The child keeps no descriptor of this process but its three standard ones:
    /// the runner's threads open sockets and pipes all the time (tpm2-tss's without close-on-exec), and a
    /// child that kept one — swtpm's only connection, a pipe another test waits on — would stall that test.
    /// `closing` is kept for callers that name far ends of their pipes; every such descriptor is closed anyway.
    public static func spawn(
        _ path: String, _ arguments: [String], environment: [String: String], standardInput: Stream = .null,
        standardOutput: Stream = .null, standardError: Stream = .null, terminal: Terminal = .none,
        currentDirectory: String? = nil, closing: [Int32] = []
    ) throws -> pid_t {
        var options = Spawn.Options(newSession: true, closeInheritedDescriptors: true)
        switch terminal {
        case .none:
            options.standardInput = standardInput.spawned  // Never inherited: the runner's may be the terminal.
            options.standardOutput = standardOutput.spawned
            options.standardError = standardError.spawned
        case .pseudoTerminal(let slave):
            options.controllingTerminal = slave
        }
        options.currentDirectory = currentDirectory
        do {
            return try Spawn.start(path, arguments, environment: environment, options: options)
        } catch {
            throw POSIXError(POSIXErrorCode(rawValue: error.rawValue) ?? .EIO)
        }
    }
}

extension ChildProcess {
    /// A close-on-exec pipe as `[read, write]`.
    public static func pipe() throws -> [Int32] {
        do {
            let ends = try Pipes.make()
            return [ends.read.rawValue, ends.write.rawValue]
        } catch {
            throw POSIXError(POSIXErrorCode(rawValue: error.rawValue) ?? .EIO)
        }
    }
}

extension ChildProcess.Stream {
    /// The same stream, as `Spawn` takes it.
    var spawned: Spawn.Stream {
        switch self {
        case .null: .null
        case .descriptor(let fd): .descriptor(FileDescriptor(rawValue: fd))
        case .appending(let file): .appending(file)
        case .standardOutput: .standardOutput
        }
    }
}
