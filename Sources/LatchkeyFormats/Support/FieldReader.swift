import LatchkeyCrypto
package import LatchkeyEngine

/// Reads a file's fields in order from its bytes, through the project's one codec (`ByteReader`): every read
/// is checked against what is left, so a declared length larger than the file is `errSecDecode` naming
/// `what`, the field and its offset — never a crash or an allocation of that length.
package struct FieldReader {
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

    /// One read of the codec from the current offset.
    private mutating func read<Value>(_ field: String, _ body: (inout ByteReader) throws(ByteReader.Truncated) -> Value)
        throws(KeychainError) -> Value
    {
        let start = offset
        let read = bytes.withUnsafeBytes { raw -> (value: Value, end: Int)? in
            var reader = ByteReader(raw, offset: start)
            do throws(ByteReader.Truncated) {
                let value = try body(&reader)
                return (value, reader.offset)
            } catch {
                return nil  // Truncated: said below, with the field and where it starts.
            }
        }
        guard let read else { throw truncated(field) }
        offset = read.end
        return read.value
    }

    package mutating func byte(_ field: String) throws(KeychainError) -> UInt8 {
        try read(field) { (reader) throws(ByteReader.Truncated) in try reader.readByte() }
    }

    package mutating func take(_ count: Int, _ field: String) throws(KeychainError) -> ArraySlice<UInt8> {
        let start = offset
        try skip(count, field)
        return bytes[start..<offset]
    }

    package mutating func skip(_ count: Int, _ field: String) throws(KeychainError) {
        try read(field) { (reader) throws(ByteReader.Truncated) in try reader.skip(count) }
    }

    package mutating func uint16LE(_ field: String) throws(KeychainError) -> UInt16 {
        try read(field) { (reader) throws(ByteReader.Truncated) in try reader.readUInt16() }
    }
    package mutating func uint32LE(_ field: String) throws(KeychainError) -> UInt32 {
        try read(field) { (reader) throws(ByteReader.Truncated) in try reader.readUInt32() }
    }
    package mutating func uint64LE(_ field: String) throws(KeychainError) -> UInt64 {
        try read(field) { (reader) throws(ByteReader.Truncated) in try reader.readUInt64() }
    }
    package mutating func uint32BE(_ field: String) throws(KeychainError) -> UInt32 {
        try read(field) { (reader) throws(ByteReader.Truncated) in try reader.readBigEndianUInt32() }
    }
}

/// Builds a file's bytes in order, through the project's one codec (`ByteWriter`).
package struct FieldWriter {
    private var writer = ByteWriter()

    package init() {}

    /// What was written.
    package var bytes: [UInt8] { writer.bytes }

    package mutating func append(_ byte: UInt8) { writer.append(byte) }
    package mutating func append(_ more: some Collection<UInt8>) { writer.appendRaw(more) }

    package mutating func uint16LE(_ value: UInt16) { writer.append(value) }
    package mutating func uint32LE(_ value: UInt32) { writer.append(value) }
    package mutating func uint64LE(_ value: UInt64) { writer.append(value) }
    package mutating func uint32BE(_ value: UInt32) { writer.appendBigEndian(value) }

    /// Overwrites the bytes (they held secrets) and empties the writer.
    package mutating func wipe() {
        writer.wipe()
        writer.removeAll()
    }
}
