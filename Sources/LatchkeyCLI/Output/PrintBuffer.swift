import FoundationEssentials
import LatchkeyCrypto
import LatchkeyPOSIX

/// `security`'s way of printing a value (`print_buffer` in keychain_utilities.c): printable ASCII in
/// quotes; anything else makes the value print as uppercase hex, followed by the quoted text with octal
/// escapes when some bytes were printable.
enum PrintBuffer {
    static func isPlain(_ byte: UInt8) -> Bool { byte >= 0x20 && byte <= 0x7E && byte != UInt8(ascii: "\\") }

    static func format(_ bytes: [UInt8]) -> String {
        var output = ""
        let anyPlain = bytes.contains(where: isPlain)
        if bytes.contains(where: { !isPlain($0) }) {
            output += "0x" + Hex.encode(bytes, uppercase: true)
            if anyPlain { output += " " }
            output += " "
        }
        if anyPlain {
            output += "\""
            for byte in bytes {
                output += isPlain(byte) ? String(UnicodeScalar(byte)) : "\\" + byte.digits(3, radix: 8)
            }
            output += "\""
        }
        return output
    }

    /// What `find-*-password -w` prints: the password as is when every byte is printable (`isprint` in the
    /// C locale, backslash included), else the whole password in lowercase hex.
    static func passwordOnly(_ bytes: [UInt8]) -> String {
        if bytes.allSatisfy({ $0 >= 0x20 && $0 <= 0x7E }) { return String(decoding: bytes, as: UTF8.self) }
        return Hex.encode(bytes)
    }
}
