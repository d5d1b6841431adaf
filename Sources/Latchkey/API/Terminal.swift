import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reading a passphrase from the controlling terminal with echo off (termios), the way `security` and
/// `ssh` prompt. The bytes go straight into a `Passphrase`; the prompt goes to the terminal, not stdout.
enum Terminal {
    /// Whether standard input is a terminal.
    static var standardInputIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// Prompts on /dev/tty and reads one line with echo off. Nil when there is no terminal or on end of
    /// input.
    static func readSecret(prompt: String) -> [UInt8]? {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        _ = prompt.withCString { write(fd, $0, strlen($0)) }  // A prompt that fails to show is not fatal.
        var saved = termios()
        let canRestore = tcgetattr(fd, &saved) == 0
        if canRestore {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            silent.c_lflag |= tcflag_t(ECHONL)
            _ = tcsetattr(fd, TCSAFLUSH, &silent)  // If echo cannot be turned off, reading still works.
        }
        defer { if canRestore { _ = tcsetattr(fd, TCSAFLUSH, &saved) } }
        return readLine(fd: fd)
    }

    /// Reads bytes up to a newline (not included) or end of input from a file descriptor.
    static func readLine(fd: Int32, limit: Int = 64 << 10) -> [UInt8]? {
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
}
