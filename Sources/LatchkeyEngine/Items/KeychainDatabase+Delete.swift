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
        let now = Date()
        // A deleted key's loaded private half (`KeyVault.heldKey`) goes with it.
        defer { if query.itemClass == .key { vault.forgetHeldKeys() } }

        return try mappingStorageErrors {
            try pool.write { db in
                let deleted = try Self.deleteMatches(of: selection, in: db, now: now)
                if deleted == 0 { throw KeychainError(.itemNotFound) }
                return deleted
            }
        }
    }

    /// Deletes (or tombstones) every item `selection` matches, inside the caller's write transaction;
    /// returns how many, each recorded in the change feed with `origin`. `delete`'s rules: a locked class key
    /// still deletes what the index alone decides, except a synchronizable item, whose tombstone must be
    /// sealed again.
    static func deleteMatches(
        of selection: ItemSelection, in db: Connection, now: Date, origin: KeychainChange.Origin = .request
    ) throws -> Int {
        let keys = selection.keys
        let indexDecides = selection.unindexedFilters.isEmpty
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
                var damaged = false
                var match: ItemSelection.Opened?
                do throws(KeychainError) {
                    match = try selection.open(candidate, attributes: candidate.synchronizable)
                } catch {
                    guard error.status == .decode else { throw error }
                    damaged = true
                }
                if damaged {
                    guard indexDecides else { continue }  // A damaged item the index alone matches goes too.
                } else {
                    guard let match else { continue }
                    opened = match
                }
            }
            if candidate.synchronizable, let opened, var attributes = opened.attributes,
                let classKey = keys.classKey(for: candidate.accessibility)
            {
                attributes[.modificationDate] = .date(now)
                let tombstone = tombstoneRow(of: opened.row, attributes: attributes, classKey: classKey)
                try ItemStore.tombstone(candidate, as: tombstone, origin: origin, in: db)
            } else {
                try ItemStore.delete(candidate, origin: origin, in: db)
            }
            deleted += 1
        }
        return deleted
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
