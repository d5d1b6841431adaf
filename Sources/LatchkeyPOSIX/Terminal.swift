import CPOSIX
import Glibc

/// Reading secrets the way `security` and `ssh` do: from the controlling terminal with echo off, or a line
/// or everything from a file descriptor. The prompt goes to the terminal, never to standard output.
package enum Terminal {
    /// Whether a descriptor is a terminal.
    package static func isTerminal(_ fd: Int32) -> Bool { isatty(fd) == 1 }

    /// How many columns the terminal on `fd` has; nil when it is not a terminal or does not say.
    package static func columns(_ fd: Int32) -> Int? {
        let columns = Int(latchkey_terminal_columns(fd))
        return columns > 0 ? columns : nil
    }

    /// Prompts on /dev/tty and reads one line with echo off; nil when there is no terminal or on end of
    /// input. Typed-ahead input is kept (the terminal is switched with TCSANOW, not TCSAFLUSH).
    package static func readHidden(prompt: String) -> [UInt8]? {
        guard case .line(let bytes) = askHidden(prompt: prompt) else { return nil }
        return bytes
    }

    /// What a prompt got.
    package enum Answer: Equatable {
        /// There is no terminal to ask on.
        case noTerminal
        /// The user ended the input (Ctrl-D) without a line.
        case endOfInput
        /// A line, without its newline.
        case line([UInt8])
    }

    /// `readHidden`, telling "no terminal" apart from "the user declined".
    package static func askHidden(prompt: String) -> Answer { ask(prompt, hidden: true) }

    /// Prompts on /dev/tty and reads one line as typed (a yes-or-no question); nil without a terminal.
    package static func readAnswer(prompt: String) -> String? {
        guard case .line(let bytes) = ask(prompt, hidden: false) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func ask(_ prompt: String, hidden: Bool) -> Answer {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return .noTerminal }
        defer { close(fd) }
        guard hidden else {
            try? Files.writeAll(fd, Array(prompt.utf8))  // A prompt that fails to show is not fatal.
            return readLine(fd).map { .line($0) } ?? .endOfInput
        }
        // Echo goes off before the prompt shows, so nothing typed in answer is ever echoed.
        var saved = termios()
        let canRestore = tcgetattr(fd, &saved) == 0
        if canRestore {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            silent.c_lflag |= tcflag_t(ECHONL)
            _ = tcsetattr(fd, TCSANOW, &silent)  // If echo cannot be turned off, reading still works.
        }
        defer { if canRestore { _ = tcsetattr(fd, TCSANOW, &saved) } }
        try? Files.writeAll(fd, Array(prompt.utf8))  // A prompt that fails to show is not fatal.
        return readLine(fd).map { .line($0) } ?? .endOfInput
    }

    /// Reads bytes up to a newline (not included) or end of input; nil at end of input with nothing read.
    package static func readLine(_ fd: Int32, limit: Int = 64 << 10) -> [UInt8]? {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < limit {
            let count = read(fd, &byte, 1)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return bytes.isEmpty ? nil : bytes }
            if byte == UInt8(ascii: "\n") { return bytes }
            bytes.append(byte)
        }
        return bytes
    }

    /// Why `readAll` failed.
    package enum ReadAllFailure: Error, Equatable {
        /// More than the limit arrived.
        case tooLarge
        /// A read failed.
        case system(Errno)
    }

    /// Reads to end of input, at most `limit` bytes.
    package static func readAll(_ fd: Int32, limit: Int) throws(ReadAllFailure) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        defer { buffer.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw .system(Errno.current) }
            if count == 0 { return bytes }
            bytes.append(contentsOf: buffer[0..<count])
            if bytes.count > limit { throw .tooLarge }
        }
    }
}
