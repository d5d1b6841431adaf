import FoundationEssentials
import Latchkey
import LatchkeyCrypto
import LatchkeyPOSIX

/// The secret of an item being added: `-w value` (visible to other users, so warned about), `-w` as the
/// last word (prompted twice), `-X hex`, `--password-fd`, `--password-stdin`, or empty.
enum SecretInput {
    static let options = [
        OptionSpec(
            .passwordFD, .required, value: "fd",
            "Read the password from this open file descriptor, to its end (a final newline is dropped)."),
        OptionSpec(.passwordStdin, "Read the password from standard input, to its end (a final newline is dropped)."),
    ]

    static func read(_ arguments: ParsedArguments, passwordKeys: [OptionKey], context: CLIContext) throws -> Data {
        let sources =
            passwordKeys.filter { arguments.has($0) }.count
            + (arguments.has(.passwordHex) ? 1 : 0) + (arguments.has(.passwordFD) ? 1 : 0)
            + (arguments.has(.passwordStdin) ? 1 : 0)
        guard sources <= 1 else {
            throw UsageError(message: "give the password one way only (-w, -X, --password-fd or --password-stdin)")
        }
        for key in passwordKeys where arguments.asksForPrompt(key) {
            return try promptTwice(context)
        }
        for key in passwordKeys {
            if let value = arguments.value(key) {
                context.warning(
                    "a password on the command line is visible to other users; put -w last to be prompted, or use --password-fd"
                )
                return Data(value.utf8)
            }
        }
        if let hex = arguments.value(.passwordHex) {
            guard let bytes = decodeHex(hex) else {
                throw UsageError(message: "-X must specify valid hex digits")
            }
            return bytes
        }
        if let fd = arguments.value(.passwordFD) {
            guard let descriptor = Int32(fd), descriptor >= 0 else {
                throw UsageError(message: "--password-fd needs a file descriptor number, not '\(fd)'")
            }
            return dropFinalNewline(try readAll(descriptor))
        }
        if arguments.has(.passwordStdin) {
            return dropFinalNewline(try readAll(0))
        }
        return Data()
    }

    private static func promptTwice(_ context: CLIContext) throws -> Data {
        for _ in 0..<3 {
            let alternatives = "--password-stdin, --password-fd or -X for the item's password"
            var first = try context.prompt("password data for new item: ", alternatives: alternatives)
            var second = try context.prompt("retype password for new item: ", alternatives: alternatives)
            defer {
                wipe(&first)
                wipe(&second)
            }
            if first == second { return Data(first) }
            context.stderr.line("passwords don't match")
        }
        throw CommandFailure(message: "the passwords did not match three times")
    }

    /// Everything on a descriptor, up to one byte more than an item's data may hold (which the keychain then
    /// refuses with its own message).
    private static func readAll(_ fd: Int32) throws -> [UInt8] {
        do throws(FileDescriptor.ReadAllFailure) {
            return try FileDescriptor(rawValue: fd).readAll(limit: ItemLimits.maximumDataBytes + 1)
        } catch {
            switch error {
            case .tooLarge:
                throw KeychainError.param("more than \(ItemLimits.maximumDataBytes + 1) bytes on file descriptor \(fd)")
            case .system(let failure): throw KeychainError(.io, "cannot read file descriptor \(fd): \(failure)")
            }
        }
    }

    private static func dropFinalNewline(_ bytes: [UInt8]) -> Data {
        var bytes = bytes
        defer { wipe(&bytes) }
        if bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return Data(bytes)
    }

    /// Hex digits to bytes; an odd count is padded with a leading zero, as `security -X` does.
    static func decodeHex(_ text: String) -> Data? {
        var digits = Array(text.utf8)
        guard !digits.isEmpty else { return nil }
        if digits.count % 2 == 1 { digits.insert(UInt8(ascii: "0"), at: 0) }
        var bytes = Data(capacity: digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = Hex.value(digits[index]), let low = Hex.value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }
}

/// `security`'s four-character codes (`-c`, `-C`, `-r`, `-t`): exactly four bytes.
enum FourCharCode {
    static func number(_ text: String, option: String) throws -> Int64 {
        let bytes = try validated(text, option: option)
        return bytes.reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }

    static func validated(_ text: String, option: String) throws -> [UInt8] {
        let bytes = Array(text.utf8)
        guard bytes.count == 4 else {
            let hint = bytes.count == 3 ? " (try \"\(text) \" instead of \"\(text)\")" : ""
            throw UsageError(message: "\(option) takes a four-character code, exactly 4 characters long\(hint)")
        }
        return bytes
    }
}
