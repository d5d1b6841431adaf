import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reading secrets the way `security` and `ssh` do: from the controlling terminal with echo off, or a line
/// from a file descriptor. The prompt goes to the terminal, never to standard output.
public enum TerminalInput {
    /// Whether standard input is a terminal.
    public static var standardInputIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// Prompts on /dev/tty and reads one line with echo off; nil when there is no terminal or on end of
    /// input. Typed-ahead input is kept (the terminal is switched with TCSANOW, not TCSAFLUSH).
    public static func readHidden(prompt: String) -> [UInt8]? {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
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
        _ = prompt.withCString { write(fd, $0, strlen($0)) }  // A prompt that fails to show is not fatal.
        return readLine(fileDescriptor: fd)
    }

    /// Reads bytes up to a newline (not included) or end of input; nil at end of input with nothing read.
    public static func readLine(fileDescriptor fd: Int32, limit: Int = 64 << 10) -> [UInt8]? {
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

    /// Reads everything up to end of input (at most `limit` bytes; more is an error).
    public static func readAll(fileDescriptor fd: Int32, limit: Int) throws(KeychainError) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 { throw KeychainError(.io, "cannot read file descriptor \(fd): \(String(cString: strerror(errno)))") }
            if count == 0 { return bytes }
            bytes.append(contentsOf: buffer[0..<count])
            if bytes.count > limit { throw KeychainError.param("more than \(limit) bytes on file descriptor \(fd)") }
        }
    }
}
