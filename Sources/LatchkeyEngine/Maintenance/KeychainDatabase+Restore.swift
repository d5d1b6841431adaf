import Foundation
internal import LatchkeyStorage

/// What to do when a restored item's primary key is already taken.
public enum ConflictPolicy: String, CaseIterable, Sendable {
    /// Keep the existing item.
    case skip
    /// Overwrite the existing item with the restored one.
    case replace
    /// Keep whichever was modified last.
    case newer
}

/// What a restore did.
public struct RestoreSummary: Hashable, Sendable {
    /// Items added.
    public var added = 0
    /// Existing items overwritten.
    public var updated = 0
    /// Items not restored because an item with the same primary key was kept.
    public var skipped = 0
}

extension KeychainDatabase {
    /// Restores items (from a `KeychainBackup`) in one transaction: all of them or none. Each keeps its
    /// access group, accessibility, sync flag, and creation and modification dates; a primary-key clash
    /// is settled by `policy`.
    public func restore(_ items: [KeychainBackup.Item], onConflict policy: ConflictPolicy, caller: CallerIdentity)
        throws(KeychainError) -> RestoreSummary
    {
        struct Plan {
            let add: PreparedAdd
            let update: PreparedUpdate
            let modified: Date
        }
        var plans: [Plan] = []
        plans.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            let created = item.attributes[.creationDate]?.dateValue ?? Date()
            let modified = item.attributes[.modificationDate]?.dateValue ?? created
            var attributes = item.attributes
            attributes[.creationDate] = nil
            attributes[.modificationDate] = nil
            do throws(KeychainError) {
                let add = try prepareAdd(NewItem(item.itemClass, attributes: attributes, data: item.data), caller: caller,
                                         dates: (created, modified))
                let schema = add.validated.schema
                var key = add.attributes.filter { schema.primaryKey.contains($0.key) }
                key[.accessGroup] = .string(add.validated.group)
                var changes = ItemChanges(
                    attributes: add.validated.attributes.filter { !schema.primaryKey.contains($0.key) },
                    data: item.data ?? Data())
                changes.attributes[.accessible] = .string(add.validated.accessibility.rawValue)
                let update = try prepareUpdate(
                    ItemQuery(item.itemClass, matching: key, synchronizable: add.validated.synchronizable ? .yes : .no, limit: .all),
                    with: changes, caller: caller, modified: modified)
                plans.append(Plan(add: add, update: update, modified: modified))
            } catch {
                throw KeychainError(error.status, "item \(index + 1) of the backup: \(error.message)")
            }
        }
        return try mappingStorageErrors {
            try pool.write { db in
                var summary = RestoreSummary()
                for plan in plans {
                    do {
                        _ = try plan.add.insert(into: db, origin: .restore)
                        summary.added += 1
                        continue
                    } catch KeychainError.duplicateItem {}
                    switch policy {
                    case .skip:
                        summary.skipped += 1
                    case .replace:
                        _ = try plan.update.apply(to: db, origin: .restore)
                        summary.updated += 1
                    case .newer:
                        let existing = try plan.update.selection.candidates(db, includeData: false).first
                        let current = try existing.flatMap { try plan.update.selection.open($0, attributes: true) }?
                            .attributes?[.modificationDate]?.dateValue
                        if let current, current >= plan.modified {
                            summary.skipped += 1
                        } else {
                            _ = try plan.update.apply(to: db, origin: .restore)
                            summary.updated += 1
                        }
                    }
                }
                return summary
            }
        }
    }
}
