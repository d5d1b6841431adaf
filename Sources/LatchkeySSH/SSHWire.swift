package import FoundationEssentials
package import LatchkeyCrypto
import LatchkeyEngine

/// Why bytes from an SSH peer could not be read: what was expected, never the bytes.
package struct SSHWireError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was wrong.
    package let reason: String

    package init(_ reason: String) { self.reason = reason }

    package var description: String { reason }
}

/// Reads the SSH wire types of RFC 4251 §5 — `byte`, `boolean`, `uint32`, `uint64`, `string`, `mpint`,
/// `name-list` — from a buffer, checking every length against what is left, so a malformed message is an
/// error and never a read past its end. The bytes are read by the project's one codec (`ByteReader`); this
/// type adds SSH's types and its errors, which name the field.
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

    /// One read of the codec from the current position; `failure` is the error when the bytes run out.
    private mutating func read<Value>(
        failure: @autoclosure () -> SSHWireError, _ body: (inout ByteReader) throws(ByteReader.Truncated) -> Value
    ) throws(SSHWireError) -> Value {
        let start = position - bytes.startIndex
        let read = bytes.withUnsafeBytes { raw -> (value: Value, end: Int)? in
            var reader = ByteReader(raw, offset: start)
            do throws(ByteReader.Truncated) {
                let value = try body(&reader)
                return (value, reader.offset)
            } catch {
                return nil  // Truncated: said by the caller's `failure`, which names the field.
            }
        }
        guard let read else { throw failure() }
        position = bytes.startIndex + read.end
        return read.value
    }

    /// `byte`.
    package mutating func byte(_ what: String = "a byte") throws(SSHWireError) -> UInt8 {
        try read(failure: SSHWireError("\(what) is missing")) { (reader) throws(ByteReader.Truncated) in
            try reader.readByte()
        }
    }

    /// `boolean`: any byte but 0 is true (RFC 4251 §5).
    package mutating func boolean(_ what: String = "a boolean") throws(SSHWireError) -> Bool { try byte(what) != 0 }

    /// `uint32`, big-endian.
    package mutating func uint32(_ what: String = "a uint32") throws(SSHWireError) -> UInt32 {
        try read(failure: SSHWireError("\(what) is cut short")) { (reader) throws(ByteReader.Truncated) in
            try reader.readBigEndianUInt32()
        }
    }

    /// `uint64`, big-endian.
    package mutating func uint64(_ what: String = "a uint64") throws(SSHWireError) -> UInt64 {
        try read(failure: SSHWireError("\(what) is cut short")) { (reader) throws(ByteReader.Truncated) in
            try reader.readBigEndianUInt64()
        }
    }

    /// `string`: a uint32 length and that many bytes.
    package mutating func string(_ what: String = "a string") throws(SSHWireError) -> Data {
        let length = Int(try uint32(what))
        return try read(failure: SSHWireError("\(what) is longer than the message (\(length) bytes)")) {
            (reader) throws(ByteReader.Truncated) in Data(try reader.readRawBuffer(length))
        }
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

/// Writes the SSH wire types (see `SSHReader`) through the project's one codec (`ByteWriter`).
package struct SSHWriter {
    private var writer = ByteWriter()

    package init() {}

    /// What was written.
    package var data: Data { writer.data }

    /// `byte`.
    package mutating func byte(_ value: UInt8) { writer.append(value) }

    /// `boolean`.
    package mutating func boolean(_ value: Bool) { writer.append(value ? 1 as UInt8 : 0) }

    /// `uint32`.
    package mutating func uint32(_ value: UInt32) { writer.appendBigEndian(value) }

    /// `uint64`.
    package mutating func uint64(_ value: UInt64) { writer.appendBigEndian(value) }

    /// `string`.
    package mutating func string(_ value: some Collection<UInt8>) {
        uint32(UInt32(value.count))
        writer.appendRaw(value)
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
    package mutating func raw(_ bytes: some Collection<UInt8>) { writer.appendRaw(bytes) }

    /// Wipes what was written (it held key material).
    package mutating func wipe() { writer.wipe() }
}

extension SSHReader {
    /// A `string` that holds a secret, copied straight into a zeroizing buffer (never into another `Data`).
    package mutating func secretString(_ what: String) throws(SSHWireError) -> SecureBytes {
        let length = Int(try uint32(what))
        return try read(failure: SSHWireError("\(what) is longer than the message (\(length) bytes)")) {
            (reader) throws(ByteReader.Truncated) in
            let raw = try reader.readRawBuffer(length)
            return SecureBytes(count: raw.count, lifetime: .transient) { $0.copyMemory(from: raw) }
        }
    }

    /// A non-negative `mpint` that holds a secret, as its magnitude in a zeroizing buffer.
    package mutating func secretInteger(_ what: String) throws(SSHWireError) -> SecureBytes {
        let length = Int(try uint32(what))
        let magnitude = try read(failure: SSHWireError("\(what) is longer than the message (\(length) bytes)")) {
            (reader) throws(ByteReader.Truncated) -> SecureBytes? in
            let raw = try reader.readRawBuffer(length)
            if let first = raw.first, first & 0x80 != 0 { return nil }  // Negative: said below.
            let digits = UnsafeRawBufferPointer(rebasing: raw.drop(while: { $0 == 0 }))
            return SecureBytes(count: digits.count, lifetime: .transient) { $0.copyMemory(from: digits) }
        }
        guard let magnitude else { throw SSHWireError("\(what) is negative") }
        return magnitude
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
