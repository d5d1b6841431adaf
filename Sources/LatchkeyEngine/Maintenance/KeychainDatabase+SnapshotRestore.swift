package import FoundationEssentials
internal import LatchkeyStorage

/// One item's version as a snapshot holds it, with the persistent reference it had there (the same row and
/// id as in the keychain, while the item lives).
package struct SnapshotItem: Sendable, Hashable {
    /// The item: class, every attribute, the secret.
    package let item: KeychainBackup.Item
    /// Its persistent reference in the snapshot.
    package let reference: Data

    /// Creates one.
    package init(item: KeychainBackup.Item, reference: Data) {
        self.item = item
        self.reference = reference
    }
}

/// What bringing items back from a snapshot did.
package struct SnapshotRestoreSummary: Hashable, Sendable {
    /// Items that still lived and were set back to the snapshot's version (same item, same reference).
    package var updated = 0
    /// Items deleted since, added again (with a new persistent reference).
    package var added = 0
    /// Items added since the snapshot that a whole restore removed.
    package var removed = 0

    /// A summary.
    package init(updated: Int = 0, added: Int = 0, removed: Int = 0) {
        self.updated = updated
        self.added = added
        self.removed = removed
    }
}

extension KeychainDatabase {
    /// Brings back `versions` (read from a snapshot) in one transaction, all or none, touching no other
    /// item: an item that still lives (found by its persistent reference) gets the snapshot's attributes and
    /// secret — those it gained since go — and keeps its identity; one deleted since is added again, with
    /// its creation and modification dates. The items of `removing` (persistent references: those a whole
    /// restore removes, added since the snapshot) are deleted first, in the same transaction, as `delete`
    /// deletes them (a synchronizable one leaves its tombstone). An item whose primary key another item has
    /// taken meanwhile is `errSecDuplicateItem`, and nothing changes. Each change goes to the change feed as
    /// a restore.
    package func restoreVersions(
        _ versions: [SnapshotItem], removing: [Data] = [], caller: CallerIdentity
    ) throws(KeychainError) -> SnapshotRestoreSummary {
        var removals: [ItemSelection] = []
        for reference in removing {
            guard let parsed = PersistentReference.parse(reference) else {
                throw KeychainError.param("an item to remove has a malformed persistent reference")
            }
            let query = ItemQuery(parsed.itemClass, synchronizable: .any, persistentReference: reference, limit: .all)
            removals.append(try selection(for: try RequestValidation.validate(query, caller: caller)))
        }
        // A removed key's loaded private half (`KeyVault.heldKey`) goes with it.
        defer {
            if removing.contains(where: { PersistentReference.parse($0)?.itemClass == .key }) { vault.forgetHeldKeys() }
        }
        struct Plan {
            let add: PreparedAdd
            let update: PreparedUpdate
        }
        var plans: [Plan] = []
        plans.reserveCapacity(versions.count)
        for version in versions {
            let item = version.item
            let created = item.attributes[.creationDate]?.dateValue ?? Date()
            let modified = item.attributes[.modificationDate]?.dateValue ?? created
            var attributes = item.attributes
            attributes[.creationDate] = nil
            attributes[.modificationDate] = nil
            if attributes[.accessControl] != nil { attributes[.accessible] = nil }
            let add = try prepareAdd(
                NewItem(item.itemClass, attributes: attributes, data: item.data), caller: caller,
                dates: (created, modified))
            var changes = ItemChanges(attributes: add.validated.attributes, data: item.data ?? Data())
            changes.attributes[.tokenID] = nil
            if add.validated.accessControl == nil {
                changes.attributes[.accessible] = .string(add.validated.accessibility.rawValue)
            }
            var update = try prepareUpdate(
                ItemQuery(item.itemClass, synchronizable: .any, persistentReference: version.reference, limit: .all),
                with: changes, caller: caller, modified: modified)
            update.confirmed = true
            update.replacingAttributes = true
            plans.append(Plan(add: add, update: update))
        }
        return try mappingStorageErrors {
            try pool.write { db in
                var summary = SnapshotRestoreSummary()
                let now = Date()
                for removal in removals {
                    // None: it went meanwhile, which is what was asked.
                    summary.removed += try Self.deleteMatches(of: removal, in: db, now: now, origin: .restore)
                }
                for plan in plans {
                    let updated: Bool
                    do {
                        updated = try plan.update.apply(to: db, origin: .restore) > 0
                    } catch KeychainError.itemNotFound {
                        updated = false  // Deleted since the snapshot: added again below.
                    }
                    if updated {
                        summary.updated += 1
                    } else {
                        do {
                            _ = try plan.add.insert(into: db, origin: .restore)
                        } catch KeychainError.duplicateItem {
                            throw KeychainError(
                                .duplicateItem,
                                "another item now has the primary key of an item to restore; delete or change it first"
                            )
                        }
                        summary.added += 1
                    }
                }
                return summary
            }
        }
    }
}
