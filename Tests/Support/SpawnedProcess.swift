import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A long-running child (an agent, a server) started with posix_spawn — through `ChildProcess`, in a
/// session of its own with no terminal — and stopped by its pid.
///
/// Foundation's `Process` watches a child through a pipe the child inherits; a daemon that closes
/// inherited descriptors (as `systemd-socket-activate` does) makes it believe the child ended and block in
/// `waitpid` — so long-running children are spawned here instead.
public final class SpawnedProcess: @unchecked Sendable {
    // @unchecked: `pid` and the input pipe are fixed at spawn; `reaped` and `exitStatus` change only in
    // `stop` and `isRunning`, which tests call from one thread.
    public let pid: pid_t
    private var reaped = false
    /// The wait status (`waitpid`'s) once the child has been reaped: tells an exit from a signal.
    public private(set) var waitStatus: Int32?
    /// This end of the pipe that is the child's standard input, when it was asked for; else -1.
    private let inputWriter: Int32

    /// How the child ended, once it has been seen to end: its exit status, or 128 + the signal that ended it.
    public private(set) var exitStatus: Int32?

    /// Spawns `executable` with `arguments` and `environment`; standard output goes to `log` (appended) or
    /// /dev/null, standard error to `errors` (appended) or where standard output goes, and standard input
    /// comes from /dev/null — or, with `input`, from a pipe that `send` writes to.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String], log: String? = nil,
        errors: String? = nil, input: Bool = false
    ) throws {
        let pipe: [Int32] = input ? try ChildProcess.pipe() : [-1, -1]
        defer { if input { close(pipe[0]) } }
        do {
            pid = try ChildProcess.spawn(
                executable, arguments, environment: environment, standardInput: input ? .descriptor(pipe[0]) : .null,
                standardOutput: log.map { .appending($0) } ?? .null,
                standardError: errors.map { .appending($0) } ?? .standardOutput)
        } catch {
            if input { close(pipe[1]) }
            throw error
        }
        inputWriter = pipe[1]
    }

    deinit {
        stop()
        if inputWriter >= 0 { close(inputWriter) }
    }

    /// Writes `data` to the child's standard input (spawned with `input: true`).
    public func send(_ data: Data) {
        precondition(inputWriter >= 0, "spawned without input: true")
        var offset = 0
        while offset < data.count {
            let count = data.withUnsafeBytes { write(inputWriter, $0.baseAddress! + offset, data.count - offset) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            offset += count
        }
    }

    /// Whether the child still runs.
    public var isRunning: Bool {
        guard !reaped else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            reap(status)
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
        reap(status)
    }

    private func reap(_ status: Int32) {
        reaped = true
        waitStatus = status
        exitStatus = (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}
