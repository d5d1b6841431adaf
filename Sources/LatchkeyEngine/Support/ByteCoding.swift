package import FoundationEssentials
internal import LatchkeyCrypto

/// Appends fixed-width integers and length-prefixed fields: the building block of the encrypted attribute
/// blob, the keybag records and the associated data (little-endian, Latchkey's own formats), and under the
/// SSH wire types (`SSHWriter`) and other programs' files (`FieldWriter`), big-endian where those formats
/// are. The project's one byte codec, with `ByteReader`. Backed by `[UInt8]`, which appends much faster than
/// `Data`.
package struct ByteWriter {
    /// What was written.
    package private(set) var bytes: [UInt8] = []

    package init(capacity: Int = 64) { bytes.reserveCapacity(capacity) }

    /// The bytes as `Data` (one copy).
    package var data: Data { Data(bytes) }

    package mutating func append(_ byte: UInt8) { bytes.append(byte) }

    /// Empties the writer, keeping its storage for the next use.
    package mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// Overwrites the bytes written with zeros (when they were plaintext to seal).
    package mutating func wipe() { bytes.withUnsafeMutableBytes { wipeBytes($0) } }

    package mutating func append(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func append(_ value: UInt64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func append(_ value: Int64) { append(UInt64(bitPattern: value)) }

    package mutating func append(_ value: Int32) { append(UInt32(bitPattern: value)) }

    package mutating func append(_ value: UInt16) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// Big-endian, as SSH's wire types and KeePass's and GNOME Keyring's files write some integers.
    package mutating func appendBigEndian(_ value: UInt16) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func appendBigEndian(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func appendBigEndian(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func appendRaw(_ raw: Data) { raw.withUnsafeBytes { bytes.append(contentsOf: $0) } }
    // Concrete overloads for the callers in other modules (the agent protocol's header, the sync
    // configuration): there the generic one below runs unspecialized, and its first call in a process costs the
    // runtime a scan of every protocol conformance record (docs/DESIGN-NOTES.md, "The CLI's start").
    package mutating func appendRaw(_ raw: [UInt8]) { bytes.append(contentsOf: raw) }
    package mutating func appendRaw(_ raw: UnsafeRawBufferPointer) { bytes.append(contentsOf: raw) }
    package mutating func appendRaw(_ raw: some Sequence<UInt8>) { bytes.append(contentsOf: raw) }

    /// A 32-bit length followed by the bytes.
    package mutating func appendField(_ field: Data) {
        append(UInt32(field.count))
        appendRaw(field)
    }

    /// A 32-bit length followed by the UTF-8 bytes.
    package mutating func appendField(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            append(UInt32(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }
}

/// Reads what `ByteWriter` wrote, straight from a buffer; every read checks bounds and throws
/// `ByteReader.Truncated`, so a declared length past the end is an error before anything is copied or
/// allocated. Use it inside `withUnsafeBytes`. `SSHReader` and `FieldReader` read through it and name the
/// field in their own errors.
package struct ByteReader {
    package struct Truncated: Error { package init() {} }

    private let buffer: UnsafeRawBufferPointer
    /// Where the next read starts.
    package private(set) var offset = 0

    package init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    /// A reader that starts `offset` bytes in (at most the buffer's end).
    package init(_ buffer: UnsafeRawBufferPointer, offset: Int) {
        self.buffer = buffer
        self.offset = min(max(0, offset), buffer.count)
    }

    package var isAtEnd: Bool { offset == buffer.count }

    /// Bytes not read yet.
    package var remaining: Int { buffer.count - offset }

    package mutating func readByte() throws(Truncated) -> UInt8 {
        guard offset < buffer.count else { throw Truncated() }
        defer { offset += 1 }
        return buffer[offset]
    }

    package mutating func readUInt32() throws(Truncated) -> UInt32 {
        UInt32(littleEndian: try readRawBuffer(4).loadUnaligned(as: UInt32.self))
    }

    package mutating func readUInt64() throws(Truncated) -> UInt64 {
        UInt64(littleEndian: try readRawBuffer(8).loadUnaligned(as: UInt64.self))
    }

    package mutating func readInt64() throws(Truncated) -> Int64 { Int64(bitPattern: try readUInt64()) }

    package mutating func readUInt16() throws(Truncated) -> UInt16 {
        UInt16(littleEndian: try readRawBuffer(2).loadUnaligned(as: UInt16.self))
    }

    /// Big-endian reads (SSH's wire types; fields of KeePass's and GNOME Keyring's files).
    package mutating func readBigEndianUInt16() throws(Truncated) -> UInt16 {
        UInt16(bigEndian: try readRawBuffer(2).loadUnaligned(as: UInt16.self))
    }

    package mutating func readBigEndianUInt32() throws(Truncated) -> UInt32 {
        UInt32(bigEndian: try readRawBuffer(4).loadUnaligned(as: UInt32.self))
    }

    package mutating func readBigEndianUInt64() throws(Truncated) -> UInt64 {
        UInt64(bigEndian: try readRawBuffer(8).loadUnaligned(as: UInt64.self))
    }

    /// Passes over `count` bytes.
    package mutating func skip(_ count: Int) throws(Truncated) { _ = try readRawBuffer(count) }

    package mutating func readRawBuffer(_ count: Int) throws(Truncated) -> UnsafeRawBufferPointer {
        guard count >= 0, buffer.count - offset >= count else { throw Truncated() }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)])
    }

    package mutating func readRaw(_ count: Int) throws(Truncated) -> Data { Data(try readRawBuffer(count)) }

    package mutating func readField() throws(Truncated) -> Data { try readRaw(Int(try readUInt32())) }

    package mutating func readText() throws(Truncated) -> String {
        let raw = try readRawBuffer(Int(try readUInt32()))
        // `String(decoding:)` is specialized and fast but repairs bad UTF-8 instead of refusing it, so a
        // text is accepted only when it decodes to exactly its own bytes. (`String(validating:as:)` is
        // generic over the encoding and instantiated at run time: a third of an attribute blob's decoding.)
        let text = String(decoding: raw, as: UTF8.self)
        // ASCII cannot be repaired, so only other texts are compared (attribute names and most values are ASCII).
        if raw.contains(where: { $0 >= 0x80 }) {
            guard text.utf8.elementsEqual(raw) else { throw Truncated() }
        }
        return text
    }
}

/// The order of byte strings SQLite gives BLOBs (memcmp, then the shorter first), on the raw bytes:
/// `Data`'s own `lexicographicallyPrecedes` walks both through their iterators a byte at a time.
package enum ByteOrder {
    /// Whether `a` sorts before `b`.
    package static func precedes(_ a: Data, _ b: Data) -> Bool {
        a.withUnsafeBytes { a in b.withUnsafeBytes { b in a.lexicographicallyPrecedes(b) } }
    }
}
