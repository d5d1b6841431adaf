import FoundationEssentials

/// One row of the `items` table: the plaintext columns (none of which holds an attribute value or a
/// secret) and the three sealed blobs.
struct ItemRow: Sendable {
    /// Whether releasing the secret needs the user's confirmation (from `accessControlFlags`, which
    /// unwrapping the item key verifies).
    var requiresUserPresence: Bool {
        !AccessControlFlags(rawValue: accessControlFlags).isDisjoint(with: .askingTheUser)
    }

    var rowID: Int64?
    /// Random 128-bit id: stable for the item's life, bound into every ciphertext.
    var id: Data
    var itemClass: ItemClass
    /// Keyed digest of the access group.
    var groupDigest: Data
    var accessibility: Accessibility
    var synchronizable: Bool
    var tombstone: Bool
    /// Increases on every change (for sync).
    var version: Int64
    /// Keyed digest of the primary key.
    var primaryKeyDigest: Data
    /// Keyed digests of the indexed attributes (`ItemDigests.shortLength` bytes each), concatenated as the
    /// `idx` column stores them: what to remove from `item_index`. Kept whole because a search reads it for
    /// every candidate (one blob instead of a `Data` per digest).
    var indexBlob: Data
    /// The item key sealed under its class key.
    var wrappedKey: Data
    /// The attributes sealed under the item key.
    var sealedAttributes: Data
    /// The secret sealed under the item key (nil for tombstones and items without data; also nil when a
    /// query did not read the column).
    var sealedData: Data?
    /// Whether the row holds a secret (`data IS NOT NULL`); bound into the attributes' associated data, so
    /// a secret removed from its row is detected.
    var hasData: Bool = false
    /// The access-control flags (`AccessControlFlags.rawValue`; 0 for none), bound into the item key's
    /// associated data when not 0.
    var accessControlFlags: UInt = 0
    /// Set when the plaintext columns could not even be read; such a row is reported as damaged.
    var malformed: Bool = false

    /// The index digests one by one: slices of `indexBlob`, which they share (no copy each).
    var indexDigests: [Data] {
        get {
            let length = ItemDigests.shortLength
            return stride(from: 0, to: indexBlob.count, by: length).map {
                indexBlob[(indexBlob.startIndex + $0)..<(indexBlob.startIndex + $0 + length)]
            }
        }
        set { indexBlob = Self.indexBlob(newValue) }
    }

    /// How many index digests the row has.
    var indexDigestCount: Int { indexBlob.count / ItemDigests.shortLength }

    /// Whether `digest` is one of the row's index digests (compared in place, without splitting the blob).
    func hasIndexDigest(_ digest: Data) -> Bool {
        let length = ItemDigests.shortLength  // 16: two 64-bit words.
        guard digest.count == length else { return false }
        return indexBlob.withUnsafeBytes { blob in
            digest.withUnsafeBytes { wanted in
                let (low, high) = (
                    wanted.loadUnaligned(as: UInt64.self), wanted.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                )
                return stride(from: 0, to: blob.count - length + 1, by: length).contains {
                    blob.loadUnaligned(fromByteOffset: $0, as: UInt64.self) == low
                        && blob.loadUnaligned(fromByteOffset: $0 + 8, as: UInt64.self) == high
                }
            }
        }
    }

    /// Digests as one blob, in order.
    static func indexBlob(_ digests: [Data]) -> Data {
        // One allocation, filled through its bytes: `Data.append(Data)` cost about a thousand instructions each.
        var blob = Data(count: digests.reduce(0) { $0 + $1.count })
        blob.withUnsafeMutableBytes { out in
            var offset = 0
            for digest in digests {
                digest.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[offset...]).copyMemory(from: $0) }
                offset += digest.count
            }
        }
        return blob
    }
}
