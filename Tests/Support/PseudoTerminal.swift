import CPseudoTerminal
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs a program on a pseudo-terminal of its own (it is a session leader and the terminal is its
/// controlling terminal, so `/dev/tty` prompts work), and lets a test answer its prompts.
public final class PseudoTerminalSession {
    private let master: Int32
    private let pid: pid_t
    /// The program's process id.
    public var processIdentifier: pid_t { pid }
    private var output = Data()
    /// Where the next `expect` starts looking: just past what the previous one matched, so a prompt shown
    /// twice is waited for twice.
    private var searchFrom = 0

    /// Starts `executable` on a new pseudo-terminal (in `currentDirectory` when given).
    public init(executable: String, arguments: [String], environment: [String: String], currentDirectory: String? = nil)
        throws
    {
        var name = [CChar](repeating: 0, count: 128)
        master = latchkey_test_open_pty(&name, UInt(name.count))
        guard master >= 0 else { throw CocoaError(.fileReadUnknown) }
        let slave = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // A new session: the slave, opened as its standard input, becomes its controlling terminal.
        do {
            pid = try ChildProcess.spawn(
                executable, arguments, environment: environment, terminal: .pseudoTerminal(slave),
                currentDirectory: currentDirectory, closing: [master])
        } catch {
            close(master)
            throw error
        }
    }

    deinit { close(master) }

    /// Everything the program wrote to its terminal so far.
    public var transcript: String { String(decoding: output, as: UTF8.self) }

    /// Reads until `text` appears in the output after the previous match (or the timeout passes); returns
    /// whether it did.
    @discardableResult
    public func expect(_ text: String, timeout: Double = 20) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        let wanted = Data(text.utf8)
        func found() -> Bool {
            guard let range = output.range(of: wanted, in: min(searchFrom, output.count)..<output.count) else {
                return false
            }
            searchFrom = range.upperBound
            return true
        }
        while !found() {
            guard Date() < deadline else { return false }
            var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(master, &buffer, buffer.count)
            if count <= 0 { return found() }
            output.append(contentsOf: buffer[0..<count])
        }
        return true
    }

    /// Types a line.
    public func send(_ line: String) {
        _ = (line + "\n").withCString { write(master, $0, strlen($0)) }
    }

    /// Types Ctrl-D at the start of a line: end of input.
    public func sendEndOfInput() {
        var eof: UInt8 = 4
        _ = write(master, &eof, 1)
    }

    /// Waits for the program to end and returns its exit status, reading the rest of its output. A program
    /// still running after `timeout` seconds is killed and its test fails (the status is then 128 + 9).
    public func wait(timeout: Double = 60) -> Int32 {
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(timeout)
        while waitpid(pid, &status, WNOHANG) == 0 {
            if Date() >= deadline {
                Issue.record("the program on the pseudo-terminal did not end within \(timeout) s; killed it")
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                break
            }
            _ = expect("\u{0}", timeout: 0.05)
        }
        _ = expect("\u{0}", timeout: 0.2)
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }
}
