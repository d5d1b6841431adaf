import CPOSIX
import Glibc

/// Reading secrets the way `security` and `ssh` do: from the controlling terminal with echo off, or a line
/// or everything from a file descriptor. The prompt goes to the terminal, never to standard output.
package enum Terminal {
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
        let raw = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard raw >= 0 else { return .noTerminal }
        let fd = FileDescriptor(rawValue: raw)
        defer { fd.close() }
        guard hidden else {
            try? fd.writeAll(Array(prompt.utf8))  // A prompt that fails to show is not fatal.
            return fd.readLine().map { .line($0) } ?? .endOfInput
        }
        // Echo goes off before the prompt shows, so nothing typed in answer is ever echoed.
        var saved = termios()
        let canRestore = tcgetattr(fd.rawValue, &saved) == 0
        if canRestore {
            var silent = saved
            silent.c_lflag &= ~tcflag_t(ECHO)
            silent.c_lflag |= tcflag_t(ECHONL)
            _ = tcsetattr(fd.rawValue, TCSANOW, &silent)  // If echo cannot be turned off, reading still works.
        }
        defer { if canRestore { _ = tcsetattr(fd.rawValue, TCSANOW, &saved) } }
        try? fd.writeAll(Array(prompt.utf8))  // A prompt that fails to show is not fatal.
        return fd.readLine().map { .line($0) } ?? .endOfInput
    }
}

extension FileDescriptor {
    /// Whether it is a terminal.
    package var isTerminal: Bool { isatty(rawValue) == 1 }

    /// How many columns the terminal on it has; nil when it is not a terminal or does not say.
    package var terminalColumns: Int? {
        let columns = Int(latchkey_terminal_columns(rawValue))
        return columns > 0 ? columns : nil
    }
}
