import Foundation

/// A persistent reference names one item across processes and restarts: `"lkp1"`, the class code (4
/// bytes), and the item's random 16-byte id. It reveals nothing about the item's contents.
enum PersistentReference {
    private static let magic = Data("lkp1".utf8)

    static func make(itemClass: ItemClass, id: Data) -> Data {
        magic + Data(itemClass.rawValue.utf8) + id
    }

    /// The class and id inside a reference, or nil when the bytes are not a Latchkey persistent reference.
    static func parse(_ reference: Data) -> (itemClass: ItemClass, id: Data)? {
        guard reference.count == 24, reference.prefix(4) == magic,
            let code = String(data: reference.dropFirst(4).prefix(4), encoding: .ascii),
            let itemClass = ItemClass(rawValue: code)
        else { return nil }
        return (itemClass, Data(reference.suffix(16)))
    }
}
