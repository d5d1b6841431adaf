package import FoundationEssentials
package import LatchkeyCrypto

/// Why bytes from an SSH peer could not be read: what was expected, never the bytes.
package struct SSHWireError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong.
    package let reason: String

    package init(_ reason: String) { self.reason = reason }

    package var description: String { reason }
}

/// Reads the SSH wire types of RFC 4251 §5 — `byte`, `boolean`, `uint32`, `uint64`, `string`, `mpint`,
/// `name-list` — from a buffer, checking every length against what is left, so a malformed message is an
/// error and never a read past its end.
package struct SSHReader {
    fileprivate let bytes: Data
    fileprivate(set) var position: Data.Index

    /// A reader of `bytes` from their start.
    package init(_ bytes: Data) {
        self.bytes = bytes
        position = bytes.startIndex
    }

    /// Bytes not read yet.
    package var remaining: Int { bytes.endIndex - position }
    /// Whether everything was read.
    package var isAtEnd: Bool { position >= bytes.endIndex }

    /// The unread bytes (and the reader at the end).
    package mutating func rest() -> Data {
        defer { position = bytes.endIndex }
        return Data(bytes[position...])
    }

    /// `byte`.
    package mutating func byte(_ what: String = "a byte") throws(SSHWireError) -> UInt8 {
        guard remaining >= 1 else { throw SSHWireError("\(what) is missing") }
        defer { position += 1 }
        return bytes[position]
    }

    /// `boolean`: any byte but 0 is true (RFC 4251 §5).
    package mutating func boolean(_ what: String = "a boolean") throws(SSHWireError) -> Bool { try byte(what) != 0 }

    /// `uint32`, big-endian.
    package mutating func uint32(_ what: String = "a uint32") throws(SSHWireError) -> UInt32 {
        guard remaining >= 4 else { throw SSHWireError("\(what) is cut short") }
        var value: UInt32 = 0
        for index in position..<position + 4 { value = value << 8 | UInt32(bytes[index]) }
        position += 4
        return value
    }

    /// `uint64`, big-endian.
    package mutating func uint64(_ what: String = "a uint64") throws(SSHWireError) -> UInt64 {
        let high = UInt64(try uint32(what))
        return high << 32 | UInt64(try uint32(what))
    }

    /// `string`: a uint32 length and that many bytes.
    package mutating func string(_ what: String = "a string") throws(SSHWireError) -> Data {
        let length = Int(try uint32(what))
        guard length <= remaining else { throw SSHWireError("\(what) is longer than the message (\(length) bytes)") }
        defer { position += length }
        return Data(bytes[position..<position + length])
    }

    /// A `string` that must be UTF-8 text without NUL (names, comments, user names).
    package mutating func text(_ what: String = "a text") throws(SSHWireError) -> String {
        let raw = try string(what)
        guard !raw.contains(0), let text = String(validating: raw, as: UTF8.self) else {
            throw SSHWireError("\(what) is not UTF-8 text")
        }
        return text
    }

    /// A `string` OpenSSH reads as a C string (`sshbuf_get_cstring`): any bytes but NUL, UTF-8 or not — a
    /// certificate's principals, the user of a login. Compare it as bytes; show it through `SSHDisplay`.
    package mutating func cString(_ what: String = "a string") throws(SSHWireError) -> Data {
        let raw = try string(what)
        guard !raw.contains(0) else { throw SSHWireError("\(what) holds a NUL byte") }
        return raw
    }

    /// An `mpint` that must not be negative, as its magnitude: big-endian, without leading zeros.
    package mutating func positiveInteger(_ what: String = "an mpint") throws(SSHWireError) -> Data {
        let raw = try string(what)
        if let first = raw.first, first & 0x80 != 0 { throw SSHWireError("\(what) is negative") }
        if raw.count >= 2, raw[raw.startIndex] == 0, raw[raw.startIndex + 1] & 0x80 == 0 {
            throw SSHWireError("\(what) has a needless leading zero")
        }
        return Data(raw.drop(while: { $0 == 0 }))
    }

    /// The next `string` as a reader of its own (a nested structure).
    package mutating func nested(_ what: String) throws(SSHWireError) -> SSHReader { SSHReader(try string(what)) }

    /// Fails when bytes are left over.
    package func expectEnd(_ what: String) throws(SSHWireError) {
        guard isAtEnd else { throw SSHWireError("\(remaining) bytes follow \(what)") }
    }
}

/// Writes the SSH wire types (see `SSHReader`).
package struct SSHWriter {
    /// What was written.
    package private(set) var data = Data()

    package init() {}

    /// `byte`.
    package mutating func byte(_ value: UInt8) { data.append(value) }

    /// `boolean`.
    package mutating func boolean(_ value: Bool) { data.append(value ? 1 : 0) }

    /// `uint32`.
    package mutating func uint32(_ value: UInt32) {
        data.append(contentsOf: [
            UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF),
        ])
    }

    /// `uint64`.
    package mutating func uint64(_ value: UInt64) {
        uint32(UInt32(value >> 32))
        uint32(UInt32(value & 0xFFFF_FFFF))
    }

    /// `string`.
    package mutating func string(_ value: some Collection<UInt8>) {
        uint32(UInt32(value.count))
        data.append(contentsOf: value)
    }

    /// `string` of UTF-8 text.
    package mutating func string(_ text: String) { string(Array(text.utf8)) }

    /// `mpint` of a non-negative magnitude (big-endian; leading zeros are dropped, and one is put back when
    /// the top bit is set).
    package mutating func positiveInteger(_ magnitude: some Collection<UInt8>) {
        let trimmed = Array(magnitude.drop(while: { $0 == 0 }))
        if let first = trimmed.first, first & 0x80 != 0 {
            string([0] + trimmed)
        } else {
            string(trimmed)
        }
    }

    /// Raw bytes, as they are.
    package mutating func raw(_ bytes: some Collection<UInt8>) { data.append(contentsOf: bytes) }

    /// Wipes what was written (it held key material).
    package mutating func wipe() { data.resetBytes(in: 0..<data.count) }
}

extension SSHReader {
    /// A `string` that holds a secret, copied straight into a zeroizing buffer (never into another `Data`).
    package mutating func secretString(_ what: String) throws(SSHWireError) -> SecureBytes {
        let length = Int(try uint32(what))
        guard length <= remaining else { throw SSHWireError("\(what) is longer than the message (\(length) bytes)") }
        let start = position
        position += length
        return SecureBytes(count: length, lifetime: .transient) { buffer in
            _ = bytes[start..<start + length].copyBytes(to: buffer.bindMemory(to: UInt8.self))
        }
    }

    /// A non-negative `mpint` that holds a secret, as its magnitude in a zeroizing buffer.
    package mutating func secretInteger(_ what: String) throws(SSHWireError) -> SecureBytes {
        let length = Int(try uint32(what))
        guard length <= remaining else { throw SSHWireError("\(what) is longer than the message (\(length) bytes)") }
        var start = position
        position += length
        let end = start + length
        if start < end, bytes[start] & 0x80 != 0 { throw SSHWireError("\(what) is negative") }
        while start < end, bytes[start] == 0 { start += 1 }
        let from = start
        return SecureBytes(count: end - from, lifetime: .transient) { buffer in
            _ = bytes[from..<end].copyBytes(to: buffer.bindMemory(to: UInt8.self))
        }
    }
}

/// How bytes a peer chose (a certificate's principal, a login's user, an SSHSIG namespace) are shown in a log
/// line or a dialog: printable ASCII as it is, and every other byte — a control character, a byte of UTF-8 or
/// not — as `\xNN` (a backslash as `\\`, a quote as `\"`), so no name can end a line, fake another, or pass
/// for another by its looks.
package enum SSHDisplay {
    /// `bytes`, escaped.
    package static func escaped(_ bytes: some Sequence<UInt8>) -> String {
        var shown = ""
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\\"): shown += "\\\\"
            case UInt8(ascii: "\""): shown += "\\\""
            case 0x20...0x7E: shown.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16)
                shown += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return shown
    }

    /// `text`'s UTF-8 bytes, escaped.
    package static func escaped(_ text: String) -> String { escaped(text.utf8) }
}
