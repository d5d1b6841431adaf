package import FoundationEssentials

/// One version of a synchronizable item as it travels between devices: its id and version (which the sync
/// layer binds into the ciphertext's associated data, with the deleted flag) and its content — class, every
/// attribute (access group, accessibility, dates included) and the secret. A deletion carries no content.
package struct SyncRecord: Sendable, Equatable {
    /// The item's random id (the same on every device).
    package var itemID: Data
    /// The version this record is.
    package var version: Int64
    /// Whether this version is the item's deletion.
    package var deleted: Bool
    /// The item's class.
    package var itemClass: ItemClass
    /// Every attribute (empty for a deletion).
    package var attributes: [AttributeKey: AttributeValue]
    /// The secret (nil when the item has none, and for a deletion).
    package var data: Data?

    package init(
        itemID: Data, version: Int64, deleted: Bool, itemClass: ItemClass,
        attributes: [AttributeKey: AttributeValue], data: Data?
    ) {
        self.itemID = itemID
        self.version = version
        self.deleted = deleted
        self.itemClass = itemClass
        self.attributes = deleted ? [:] : attributes
        self.data = deleted ? nil : data
    }

    private static let magic: [UInt8] = Array("LKSR".utf8) + [1]

    /// The content as bytes (what the sync layer encrypts): magic, class, attributes, secret.
    package func encodedContent() -> Data {
        var writer = ByteWriter(capacity: 128 + (data?.count ?? 0))
        writer.appendRaw(Self.magic)
        writer.appendField(itemClass.rawValue)
        writer.appendField(AttributeBlob.encode(attributes))
        if let data {
            writer.append(1 as UInt8)
            writer.appendField(data)
        } else {
            writer.append(0 as UInt8)
        }
        return writer.data
    }

    /// Reads content written by `encodedContent()`; errSecDecode when it is not one.
    package init(itemID: Data, version: Int64, deleted: Bool, content: Data) throws(KeychainError) {
        let parsed: (ItemClass, [AttributeKey: AttributeValue], Data?)? = content.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            do {
                guard Array(try reader.readRawBuffer(Self.magic.count)) == Self.magic,
                    let itemClass = ItemClass(rawValue: try reader.readText()),
                    let attributes = AttributeBlob.decode(try reader.readField())
                else { return nil }
                let data = try reader.readByte() == 1 ? try reader.readField() : nil
                guard reader.isAtEnd else { return nil }
                return (itemClass, attributes, data)
            } catch {
                return nil
            }
        }
        guard let (itemClass, attributes, data) = parsed else {
            throw KeychainError.decode("a synced item's content is malformed")
        }
        self.init(
            itemID: itemID, version: version, deleted: deleted, itemClass: itemClass, attributes: attributes, data: data
        )
    }

    /// A short, secret-free description for conflict lists: class, service or server, account.
    package var summary: String {
        var parts = [itemClass.rawValue]
        for key in [AttributeKey.label, .service, .server, .account] {
            if let value = attributes[key]?.stringValue, !value.isEmpty { parts.append("\(key.rawValue)=\(value)") }
        }
        return parts.joined(separator: " ")
    }
}

/// A row the server sent: which item, which version, under which vault key, by which device, and its
/// ciphertext — kept as it came until the sync layer has verified and applied it.
package struct SyncEnvelope: Sendable, Equatable {
    /// The server's change sequence.
    package var sequence: Int64
    package var itemID: Data
    package var version: Int64
    package var deleted: Bool
    package var keyID: Int32
    package var ciphertext: Data
    /// The device that wrote it.
    package var author: Data

    package init(
        sequence: Int64, itemID: Data, version: Int64, deleted: Bool, keyID: Int32, ciphertext: Data, author: Data
    ) {
        self.sequence = sequence
        self.itemID = itemID
        self.version = version
        self.deleted = deleted
        self.keyID = keyID
        self.ciphertext = ciphertext
        self.author = author
    }
}

/// A local change waiting to be pushed: the record and the version the server holds (0: none).
package struct SyncOutgoing: Sendable {
    package var record: SyncRecord
    package var expectedVersion: Int64
}

/// A losing version kept for the user: sealed under the vault key by the sync layer.
package struct SyncConflict: Sendable, Equatable {
    /// Its number (for `latchkey sync conflicts --restore`).
    package var id: Int64
    package var itemID: Data
    package var version: Int64
    package var keyID: Int32
    package var sealed: Data
    /// Why it lost (no secret).
    package var reason: String
    package var recorded: Date
}

/// A row refused on verification: what and why, never its content.
package struct SyncRejection: Sendable, Equatable {
    package var sequence: Int64
    package var itemID: Data
    package var version: Int64
    package var reason: String
    package var recorded: Date
}

/// What applying one record did.
package enum SyncApplyOutcome: Sendable, Equatable {
    /// Written (added, changed or deleted).
    case applied
    /// Written, and a local version lost to it (kept as a conflict record).
    case appliedOverConflict
    /// Another live item with the same primary key and a lower id won; this record was kept as a conflict.
    case lostToExistingItem
    /// Its class key is not available: it stays in the inbox until unlock.
    case locked
}

/// What to do with one pulled or inbox row (the sync layer decides after verifying it).
package enum SyncInboxAction: Sendable {
    /// Drop it: this device has that version.
    case discard
    /// Record it as the server's version: this device's own push whose acknowledgement was lost.
    case acknowledge
    /// Refuse it, with the reason (no content).
    case reject(String)
    /// Apply the verified record.
    case apply(SyncRecord)
}

/// How the sync layer seals a losing version for the conflict list: (key id, sealed bytes).
package typealias SyncConflictSealer = (SyncRecord) -> (keyID: Int32, sealed: Data)
