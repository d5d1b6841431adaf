import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs programs to completion for the tests: the `latchkey-test-helper` SwiftPM builds beside the test
/// bundle, the built tools, or any program — with a timeout, so a stuck child fails its test instead of
/// hanging the run.
///
/// Spawned through `ChildProcess` (a session of its own, no terminal); the pipes are created close-on-exec,
/// so a program another test spawns at the same moment cannot inherit them (and keep this one's output open,
/// or an executable busy).
public enum HelperProcess {
    public static var executable: String { product("latchkey-test-helper") }

    /// How long a child may run before it is killed and its test fails.
    public static let defaultTimeout: Double = 120

    /// An executable SwiftPM built beside the test bundle.
    public static func product(_ name: String) -> String {
        let testBinary =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: testBinary).deletingLastPathComponent().appendingPathComponent(name).path
    }

    public struct Output: Sendable {
        /// The exit status, or 128 + the signal that ended the program.
        public let status: Int32
        public let stdout: String
        public let stderr: String
        /// Standard output as written (for a program that writes bytes, not text).
        public let stdoutBytes: Data
    }

    /// A child that did not end within its timeout (it was killed).
    public struct TimedOut: Error, CustomStringConvertible {
        public let command: String
        public let seconds: Double
        public var description: String { "\(command) did not end within \(seconds) s and was killed" }
    }

    /// Runs the helper to completion.
    public static func run(_ arguments: [String], environment: [String: String]? = nil) throws -> Output {
        try run(executable, arguments, environment: environment)
    }

    /// Runs an executable to completion (in a session of its own, see `ChildProcess`; in
    /// `currentDirectory` when given), feeding `input` to its standard input; throws `TimedOut` (after
    /// killing it) when it runs longer than `timeout` seconds.
    public static func run(
        _ path: String, _ arguments: [String], environment: [String: String]? = nil,
        input: Data? = nil, timeout: Double = defaultTimeout, currentDirectory: String? = nil
    )
        throws -> Output
    {
        let inputPipe = try ChildProcess.pipe()
        let outputPipe: [Int32]
        let errorPipe: [Int32]
        do {
            outputPipe = try ChildProcess.pipe()
            do {
                errorPipe = try ChildProcess.pipe()
            } catch {
                for fd in outputPipe { close(fd) }
                throw error
            }
        } catch {
            for fd in inputPipe { close(fd) }
            throw error
        }
        let pid: pid_t
        do {
            pid = try ChildProcess.spawn(
                path, arguments, environment: environment ?? ProcessInfo.processInfo.environment,
                standardInput: .descriptor(inputPipe[0]), standardOutput: .descriptor(outputPipe[1]),
                standardError: .descriptor(errorPipe[1]), currentDirectory: currentDirectory)
        } catch {
            for fd in inputPipe + outputPipe + errorPipe { close(fd) }
            throw error
        }
        for fd in [inputPipe[0], outputPipe[1], errorPipe[1]] { close(fd) }
        let command = ([path] + arguments).joined(separator: " ")
        let (stdout, stderr, finished) = pump(
            input: input ?? Data(), stdin: inputPipe[1], stdout: outputPipe[0],
            stderr: errorPipe[0], deadline: Date().addingTimeInterval(timeout))
        var status: Int32 = 0
        if !finished {
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
            throw TimedOut(command: command, seconds: timeout)
        }
        let deadline = Date().addingTimeInterval(timeout)
        while waitpid(pid, &status, WNOHANG) == 0 {
            guard Date() < deadline else {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                throw TimedOut(command: command, seconds: timeout)
            }
            usleep(1_000)
        }
        let signal = status & 0x7F
        return Output(
            status: signal == 0 ? (status >> 8) & 0xFF : 128 + signal,
            stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self),
            stdoutBytes: stdout)
    }

    /// Writes `input` and reads both outputs until they end (or the deadline passes: `finished` false).
    private static func pump(input: Data, stdin: Int32, stdout: Int32, stderr: Int32, deadline: Date)
        -> (Data, Data, finished: Bool)
    {
        var collected = [Data(), Data()]
        var open = [stdout, stderr]
        var writer: Int32 = stdin
        var written = 0
        if input.isEmpty {
            close(writer)
            writer = -1
        } else {
            _ = fcntl(writer, F_SETFL, fcntl(writer, F_GETFL) | O_NONBLOCK)
        }
        defer {
            if writer >= 0 { close(writer) }
            for fd in open where fd >= 0 { close(fd) }
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while open.contains(where: { $0 >= 0 }) {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return (collected[0], collected[1], false) }
            var polls = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if writer >= 0 { polls.append(pollfd(fd: writer, events: Int16(POLLOUT), revents: 0)) }
            let ready = poll(&polls, nfds_t(polls.count), Int32(min(remaining, 1) * 1_000))
            if ready < 0 && errno != EINTR { return (collected[0], collected[1], false) }
            for (index, entry) in polls.enumerated() where entry.revents != 0 {
                if index < 2 {
                    let count = read(entry.fd, &buffer, buffer.count)
                    if count > 0 {
                        collected[index].append(contentsOf: buffer[0..<count])
                    } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                        close(entry.fd)
                        open[index] = -1
                    }
                } else {
                    let count = input.withUnsafeBytes { bytes in
                        write(writer, bytes.baseAddress! + written, min(bytes.count - written, 1 << 16))
                    }
                    if count > 0 { written += count }
                    if written == input.count || (count < 0 && errno != EAGAIN && errno != EINTR) {
                        close(writer)
                        writer = -1
                    }
                }
            }
        }
        return (collected[0], collected[1], true)
    }
}

/// Puts a copy of the executable `source` at `destination` the way a rebuild does, without this process
/// ever holding the new file open for writing — a program another test spawns at that moment would
/// inherit such a descriptor until it execs, and running the new file would then fail with "Text file
/// busy". `cp` writes it under a temporary name; a rename puts it in place.
public func installExecutable(copying source: String, to destination: String) throws {
    let temporary = destination + ".installing"
    let copy = try HelperProcess.run("/bin/cp", [source, temporary])
    guard copy.status == 0 else { throw POSIXError(.EIO) }
    guard rename(temporary, destination) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
}

/// Writes a script (`text`, mode 0700) at `path` the way `installExecutable` puts a program in place: a
/// child writes it and a rename puts it there, so no descriptor open for writing it is ever in this
/// process, where a program another test spawns at that moment could inherit it — running the script
/// would then fail with "Text file busy".
public func installScript(_ text: String, at path: String) throws {
    let temporary = path + ".installing"
    let written = try HelperProcess.run(
        "/bin/sh", ["-c", "cat > \"$1\" && chmod 700 \"$1\"", "sh", temporary],
        environment: ["PATH": "/usr/bin:/bin"], input: Data(text.utf8))
    guard written.status == 0 else { throw POSIXError(.EIO) }
    guard rename(temporary, path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
}
