import LatchkeyCrypto
package import LatchkeyEngine

/// Reads a file's fields in order from its bytes: every read is checked against what is left, so a declared
/// length larger than the file is `errSecDecode` naming `what` and the offset, never a crash or an allocation
/// of that length.
package struct ByteReader {
    package let bytes: [UInt8]
    package private(set) var offset: Int
    /// What is read ("the keyring file"), for the messages.
    let what: String

    package init(_ bytes: [UInt8], offset: Int = 0, what: String) {
        self.bytes = bytes
        self.offset = offset
        self.what = what
    }

    /// Bytes not read yet.
    package var remaining: Int { bytes.count - offset }
    package var isAtEnd: Bool { offset == bytes.count }

    package func truncated(_ field: String) -> KeychainError {
        KeychainError.decode("\(what) is truncated: \(field) at byte \(offset) runs past its end")
    }

    package mutating func byte(_ field: String) throws(KeychainError) -> UInt8 {
        guard remaining >= 1 else { throw truncated(field) }
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func take(_ count: Int, _ field: String) throws(KeychainError) -> ArraySlice<UInt8> {
        guard count >= 0, remaining >= count else { throw truncated(field) }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    package mutating func skip(_ count: Int, _ field: String) throws(KeychainError) {
        _ = try take(count, field)
    }

    private mutating func integer<T: FixedWidthInteger>(_ type: T.Type, bigEndian: Bool, _ field: String)
        throws(KeychainError) -> T
    {
        let size = MemoryLayout<T>.size
        let slice = try take(size, field)
        var value: T = 0
        for (index, byte) in slice.enumerated() {
            let shift = bigEndian ? (size - 1 - index) * 8 : index * 8
            value |= T(byte) << shift
        }
        return value
    }

    package mutating func uint16LE(_ field: String) throws(KeychainError) -> UInt16 {
        try integer(UInt16.self, bigEndian: false, field)
    }
    package mutating func uint32LE(_ field: String) throws(KeychainError) -> UInt32 {
        try integer(UInt32.self, bigEndian: false, field)
    }
    package mutating func uint64LE(_ field: String) throws(KeychainError) -> UInt64 {
        try integer(UInt64.self, bigEndian: false, field)
    }
    package mutating func uint32BE(_ field: String) throws(KeychainError) -> UInt32 {
        try integer(UInt32.self, bigEndian: true, field)
    }
}

/// Builds a file's bytes in order.
package struct ByteWriter {
    package private(set) var bytes: [UInt8] = []

    package init() {}

    package mutating func append(_ byte: UInt8) { bytes.append(byte) }
    package mutating func append(_ more: some Collection<UInt8>) { bytes.append(contentsOf: more) }

    private mutating func append<T: FixedWidthInteger>(_ value: T, bigEndian: Bool) {
        let size = MemoryLayout<T>.size
        for index in 0..<size {
            let shift = bigEndian ? (size - 1 - index) * 8 : index * 8
            bytes.append(UInt8(truncatingIfNeeded: value >> shift))
        }
    }

    package mutating func uint16LE(_ value: UInt16) { append(value, bigEndian: false) }
    package mutating func uint32LE(_ value: UInt32) { append(value, bigEndian: false) }
    package mutating func uint64LE(_ value: UInt64) { append(value, bigEndian: false) }
    package mutating func uint32BE(_ value: UInt32) { append(value, bigEndian: true) }

    /// Overwrites the bytes (they held secrets) and empties the writer.
    package mutating func wipe() {
        bytes.withUnsafeMutableBytes { wipeBytes($0) }
        bytes = []
    }
}
