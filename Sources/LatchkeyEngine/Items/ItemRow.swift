import Foundation

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
    /// Keyed digests of the indexed attributes, concatenated (what to remove from `item_index`).
    var indexDigests: [Data]
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
}
