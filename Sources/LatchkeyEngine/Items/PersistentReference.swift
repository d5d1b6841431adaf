package import FoundationEssentials

/// A persistent reference names one item across processes and restarts: `"lkp1"`, the class code (4
/// bytes), the item's row number (8 bytes, big-endian) and its random 16-byte id. The row number finds the
/// row without any index; the id must match too, so a reference never names a different item that later
/// took the same row. It reveals nothing about the item's contents.
package enum PersistentReference {
    private static let magic = Data("lkp1".utf8)
    package static let length = 32

    package static func make(itemClass: ItemClass, rowID: Int64, id: Data) -> Data {
        // One allocation: every search result carries a reference, so this is on the path of every find.
        var reference = Data(count: length)
        reference.withUnsafeMutableBytes { buffer in
            buffer.copyBytes(from: magic)
            UnsafeMutableRawBufferPointer(rebasing: buffer[4..<8]).copyBytes(from: itemClass.rawValue.utf8.prefix(4))
            buffer.storeBytes(of: rowID.bigEndian, toByteOffset: 8, as: Int64.self)
            id.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: buffer[16..<length]).copyBytes(from: $0.prefix(16))
            }
        }
        return reference
    }

    /// The class, row and id inside a reference, or nil when the bytes are not a Latchkey persistent
    /// reference.
    package static func parse(_ reference: Data) -> (itemClass: ItemClass, rowID: Int64, id: Data)? {
        guard reference.count == length, reference.prefix(4) == magic,
            let code = String(data: reference.dropFirst(4).prefix(4), encoding: .ascii),
            let itemClass = ItemClass(rawValue: code)
        else { return nil }
        let rowID = reference.dropFirst(8).prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
        return (itemClass, rowID, Data(reference.suffix(16)))
    }
}
