import Foundation

/// Appends fixed-width little-endian integers and length-prefixed fields: the building block of the
/// encrypted attribute blob, the keybag and the associated data.
struct ByteWriter {
    private(set) var data = Data()

    init(capacity: Int = 64) { data.reserveCapacity(capacity) }

    mutating func append(_ byte: UInt8) { data.append(byte) }

    mutating func append(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
    }

    mutating func append(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
    }

    mutating func append(_ value: Int64) { append(UInt64(bitPattern: value)) }

    mutating func appendRaw(_ bytes: Data) { data.append(bytes) }
    mutating func appendRaw(_ bytes: some Sequence<UInt8>) { data.append(contentsOf: bytes) }

    /// A 32-bit length followed by the bytes.
    mutating func appendField(_ bytes: Data) {
        append(UInt32(bytes.count))
        data.append(bytes)
    }

    /// A 32-bit length followed by the UTF-8 bytes.
    mutating func appendField(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            append(UInt32(utf8.count))
            data.append(contentsOf: utf8)
        }
    }
}

/// Reads what `ByteWriter` wrote; every read checks bounds and throws `ByteReader.Truncated`.
struct ByteReader {
    struct Truncated: Error {}

    private let data: Data
    private var offset: Int

    init(_ data: Data) {
        self.data = data
        self.offset = data.startIndex
    }

    var isAtEnd: Bool { offset == data.endIndex }

    mutating func readByte() throws(Truncated) -> UInt8 {
        guard offset < data.endIndex else { throw Truncated() }
        defer { offset += 1 }
        return data[offset]
    }

    mutating func readUInt32() throws(Truncated) -> UInt32 {
        let bytes = try readRaw(4)
        return bytes.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self)) }
    }

    mutating func readUInt64() throws(Truncated) -> UInt64 {
        let bytes = try readRaw(8)
        return bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }

    mutating func readInt64() throws(Truncated) -> Int64 { Int64(bitPattern: try readUInt64()) }

    mutating func readRaw(_ count: Int) throws(Truncated) -> Data {
        guard count >= 0, data.endIndex - offset >= count else { throw Truncated() }
        defer { offset += count }
        return data.subdata(in: offset..<(offset + count))
    }

    mutating func readField() throws(Truncated) -> Data { try readRaw(Int(try readUInt32())) }

    mutating func readText() throws(Truncated) -> String {
        let bytes = try readField()
        guard let text = String(validating: bytes, as: UTF8.self) else { throw Truncated() }
        return text
    }
}
