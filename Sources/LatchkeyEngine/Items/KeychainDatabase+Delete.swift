import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyStorage

extension KeychainDatabase {
    /// Deletes every matching item (`SecItemDelete`) in one transaction and returns how many went.
    ///
    /// A synchronizable item leaves a tombstone (attributes kept encrypted, secret dropped, version
    /// increased) so the deletion can sync; other items are removed, their freed pages zeroed
    /// (`secure_delete`). As on Apple's keychain, items whose class key is locked can still be deleted
    /// when the index alone decides the match — except synchronizable ones, whose tombstone must be
    /// re-encrypted (`errSecInteractionNotAllowed`). Damaged items that the index matches are deleted too.
    @discardableResult
    public func delete(_ query: ItemQuery, caller: CallerIdentity) throws(KeychainError) -> Int {
        try Self.requireFilterOnly(query, operation: "delete")
        let validated = try RequestValidation.validate(query, caller: caller)
        let selection = try selection(for: validated)
        let keys = selection.keys
        let indexDecides = selection.unindexedFilters.isEmpty
        let now = Date()
        // A deleted key's loaded private half (`KeyVault.heldKey`) goes with it.
        defer { if query.itemClass == .key { vault.forgetHeldKeys() } }

        return try mappingStorageErrors {
            try pool.write { db in
                var deleted = 0
                for candidate in try selection.candidates(db, includeData: false) {
                    var opened: ItemSelection.Opened?
                    if keys.classKey(for: candidate.accessibility) == nil {
                        guard indexDecides && !candidate.synchronizable else {
                            throw KeychainError.locked(
                                "deleting this item needs the class key of accessibility \(candidate.accessibility.rawValue)"
                            )
                        }
                    } else {
                        do {
                            guard let match = try selection.open(candidate, attributes: candidate.synchronizable) else {
                                continue
                            }
                            opened = match
                        } catch KeychainError.decode {
                            guard indexDecides else { continue }
                        }
                    }
                    if candidate.synchronizable, let opened, var attributes = opened.attributes,
                        let classKey = keys.classKey(for: candidate.accessibility)
                    {
                        attributes[.modificationDate] = .date(now)
                        let tombstone = Self.tombstoneRow(of: opened.row, attributes: attributes, classKey: classKey)
                        try ItemStore.tombstone(candidate, as: tombstone, in: db)
                    } else {
                        try ItemStore.delete(candidate, in: db)
                    }
                    deleted += 1
                }
                if deleted == 0 { throw KeychainError(.itemNotFound) }
                return deleted
            }
        }
    }
}

extension KeychainDatabase {
    /// A synchronizable item's tombstone: the same row, its attributes sealed again under a new item key
    /// without the secret, no index entries, the next version.
    static func tombstoneRow(of row: ItemRow, attributes: [AttributeKey: AttributeValue], classKey: SecureBytes)
        -> ItemRow
    {
        var tombstone = row
        tombstone.tombstone = true
        tombstone.version += 1
        tombstone.indexDigests = []
        tombstone.sealedData = nil
        let itemKey = ItemSealing.newItemKey()
        ItemSealing.seal(attributes: attributes, data: nil, into: &tombstone, itemKey: itemKey)
        ItemSealing.wrap(itemKey, into: &tombstone, classKey: classKey)
        return tombstone
    }
}
