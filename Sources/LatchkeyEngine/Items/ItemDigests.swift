import FoundationEssentials
internal import LatchkeyCrypto

/// The keyed digests that stand in for attribute values in the file (all keyed with the index key):
/// the access-group column, the primary-key column, and the generic (attribute, value) index.
enum ItemDigests {
    /// Length of access-group and index digests. A false match only costs a decryption (every candidate is
    /// checked against its decrypted attributes).
    static let shortLength = 16
    /// Length of the primary-key digest, which backs the UNIQUE constraint: 128 bits of a keyed hash, so
    /// a false duplicate would need a collision of a secret-keyed BLAKE2b.
    static let primaryKeyLength = 16

    static func group(_ group: String, key: SecureBytes) -> Data {
        var writer = ByteWriter(capacity: 8 + group.utf8.count)
        writer.appendRaw("lk1/g".utf8)
        writer.appendField(group)
        return KeyedDigest.digest(writer.bytes, key: key, length: shortLength)
    }

    /// The digest of the class and its primary-key attributes in schema order, each missing one taking its
    /// default (so two items that both omit `acct` collide, as on Apple's keychain).
    static func primaryKey(schema: ItemSchema, attributes: [AttributeKey: AttributeValue], key: SecureBytes) -> Data {
        var writer = ByteWriter(capacity: 128)
        writer.appendRaw("lk1/p".utf8)
        writer.appendField(schema.itemClass.rawValue)
        for name in schema.primaryKey {
            writer.appendField(name.rawValue)
            CanonicalValue.appendField(attributes[name] ?? schema.defaultValue(for: name), to: &writer)
        }
        return KeyedDigest.digest(writer.bytes, key: key, length: primaryKeyLength)
    }

    static func index(itemClass: ItemClass, attribute: AttributeKey, value: AttributeValue, key: SecureBytes) -> Data {
        var writer = ByteWriter(capacity: 64)
        return index(itemClass: itemClass, attribute: attribute, value: value, key: key, using: &writer)
    }

    /// As `index(itemClass:attribute:value:key:)`, reusing `writer`'s storage.
    private static func index(
        itemClass: ItemClass, attribute: AttributeKey, value: AttributeValue, key: SecureBytes,
        using writer: inout ByteWriter
    ) -> Data {
        writer.removeAll()
        writer.appendRaw("lk1/i".utf8)
        writer.appendField(itemClass.rawValue)
        writer.appendField(attribute.rawValue)
        CanonicalValue.appendField(value, to: &writer)
        return KeyedDigest.digest(writer.bytes, key: key, length: shortLength)
    }

    /// Attributes kept out of the generic index: the bookkeeping ones live in their own columns or change
    /// on every write.
    static let unindexed: Set<AttributeKey> = [
        .accessGroup, .accessible, .synchronizable, .creationDate, .modificationDate,
    ]

    /// One index digest per indexed attribute of an item, sorted (stored concatenated in the row).
    static func indexEntries(itemClass: ItemClass, attributes: [AttributeKey: AttributeValue], key: SecureBytes)
        -> [Data]
    {
        var writer = ByteWriter(capacity: 128)
        var entries: [Data] = []
        entries.reserveCapacity(attributes.count)
        for (name, value) in attributes where !unindexed.contains(name) {
            entries.append(index(itemClass: itemClass, attribute: name, value: value, key: key, using: &writer))
        }
        return entries.sorted(by: ByteOrder.precedes)
    }

    /// The first eight bytes of a digest as a big-endian integer: sorting by it puts digests in SQLite's
    /// BLOB order up to ties of 64 bits, which for keyed digests only cost a little locality. Integer keys
    /// sort far faster than comparing `Data` values.
    static func orderKey(_ digest: Data) -> UInt64 {
        // Through the raw bytes: iterating `Data` itself goes through its iterator a byte at a time.
        digest.withUnsafeBytes { bytes in
            var key: UInt64 = 0
            for byte in bytes.prefix(8) { key = key << 8 | UInt64(byte) }
            return key << (8 * UInt64(max(0, 8 - bytes.count)))
        }
    }
}
