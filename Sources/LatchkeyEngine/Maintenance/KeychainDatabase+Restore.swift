import FoundationEssentials
internal import LatchkeyStorage

/// What to do when a restored item's primary key is already taken.
package enum ConflictPolicy: String, CaseIterable, Sendable {
    /// Keep the existing item.
    case skip
    /// Overwrite the existing item with the restored one.
    case replace
    /// Keep whichever was modified last.
    case newer
}

/// What a restore did.
package struct RestoreSummary: Hashable, Sendable {
    /// Items added.
    package var added = 0
    /// Existing items overwritten.
    package var updated = 0
    /// Items not restored because an item with the same primary key was kept.
    package var skipped = 0
}

extension KeychainDatabase {
    /// Restores items (from a `KeychainBackup`) in one transaction: all of them or none. Each keeps its
    /// access group, accessibility, sync flag, and creation and modification dates; a primary-key clash
    /// is settled by `policy`. Replacing an item whose access control asks for the user does not ask: a
    /// restore is the keychain owner's operation on an unlocked keychain, and it reads no secret.
    /// `progress` hears of the items prepared, then of the items written. An item's access list comes with
    /// it, added to the list of the item it becomes (added or replaced; a skipped item's list is left alone),
    /// each entry marked as restored from a backup: its identities are those of the machine it was made on,
    /// and name the same program here only where the same executable (path and contents), app ID or label is.
    package func restore(
        _ items: [KeychainBackup.Item], onConflict policy: ConflictPolicy, caller: CallerIdentity,
        progress: ProgressHandler? = nil
    ) throws(KeychainError) -> RestoreSummary {
        struct Plan {
            let add: PreparedAdd
            let update: PreparedUpdate
            let modified: Date
            let accessList: [AccessListEntry]
        }
        var plans: [Plan] = []
        plans.reserveCapacity(items.count)
        let preparing = ProgressReporter(progress, .preparing, total: items.count)
        for (index, item) in items.enumerated() {
            let created = item.attributes[.creationDate]?.dateValue ?? Date()
            let modified = item.attributes[.modificationDate]?.dateValue ?? created
            var attributes = item.attributes
            attributes[.creationDate] = nil
            attributes[.modificationDate] = nil
            // A stored item carries both its access control and the accessibility it implies; the control
            // alone says both (giving both is Apple's "conflicting" error when the control has constraints).
            if attributes[.accessControl] != nil { attributes[.accessible] = nil }
            do throws(KeychainError) {
                let add = try prepareAdd(
                    NewItem(item.itemClass, attributes: attributes, data: item.data), caller: caller,
                    dates: (created, modified))
                let schema = add.validated.schema
                var key = add.attributes.filter { schema.primaryKey.contains($0.key) }
                key[.accessGroup] = .string(add.validated.group)
                var changes = ItemChanges(
                    attributes: add.validated.attributes.filter { !schema.primaryKey.contains($0.key) },
                    data: item.data ?? Data())
                if add.validated.accessControl == nil {
                    changes.attributes[.accessible] = .string(add.validated.accessibility.rawValue)
                }
                var update = try prepareUpdate(
                    ItemQuery(
                        item.itemClass, matching: key, synchronizable: add.validated.synchronizable ? .yes : .no,
                        limit: .all),
                    with: changes, caller: caller, modified: modified)
                update.confirmed = true
                plans.append(Plan(add: add, update: update, modified: modified, accessList: item.accessList))
            } catch {
                throw KeychainError(error.status, "item \(index + 1) of the backup: \(error.message)")
            }
            preparing.report(index + 1)
        }
        return try mappingStorageErrors {
            try pool.write { db in
                var summary = RestoreSummary()
                let writing = ProgressReporter(progress, .writing, total: plans.count)
                for (index, plan) in plans.enumerated() {
                    var inserted: ItemRow?
                    do {
                        inserted = try plan.add.insert(into: db, origin: .restore)
                    } catch KeychainError.duplicateItem {
                        inserted = nil  // The primary key is taken: the policy settles it.
                    }
                    let existing =
                        try inserted == nil ? plan.update.selection.candidates(db, includeData: false).first : nil
                    var listed = inserted?.id
                    switch (inserted != nil, policy) {
                    case (true, _):
                        summary.added += 1
                    case (false, .skip):
                        summary.skipped += 1
                    case (false, .replace):
                        _ = try plan.update.apply(to: db, origin: .restore)
                        summary.updated += 1
                        listed = existing?.id
                    case (false, .newer):
                        let current = try existing.flatMap { try plan.update.selection.open($0, attributes: true) }?
                            .attributes?[.modificationDate]?.dateValue
                        if let current, current >= plan.modified {
                            summary.skipped += 1
                        } else {
                            _ = try plan.update.apply(to: db, origin: .restore)
                            summary.updated += 1
                            listed = existing?.id
                        }
                    }
                    if let listed, !plan.accessList.isEmpty {
                        try restoreAccessList(plan.accessList, itemID: listed, in: db)
                    }
                    writing.report(index + 1)
                }
                return summary
            }
        }
    }
}
