import FoundationEssentials
internal import LatchkeyStorage

/// The one funnel every mutation of an item passes through: the row, its index entries and its entry in
/// the change feed are written together, in the caller's write transaction — and a deleted item's access
/// list goes with it (format v6).
enum ItemStore {
    /// Stores a new item. Added over a tombstone of the same primary key, it takes that tombstone's row and
    /// item id with the next version (one history for sync); otherwise it is a new row. A live item with the
    /// same primary key is `errSecDuplicateItem`. `indexingLater`: the caller inserts the index entries
    /// itself (a batch sorts all of them). `checkTombstones` false skips the tombstone lookup when the caller
    /// knows there is none. `deferred`: the change-feed entry and the dirty mark go there, for the caller to
    /// write with those of the other items of its transaction. A new synchronizable item is marked in
    /// `sync_dirty` (format v5 has no trigger on inserts). Returns the row as stored (with its number).
    static func add(
        _ fresh: ItemRow, reseal: (Data, Int64, Int64?) -> ItemRow, origin: KeychainChange.Origin, in db: Connection,
        indexingLater: Bool = false, checkTombstones: Bool = true, deferred: DeferredItemWrites? = nil
    ) throws -> ItemRow {
        if checkTombstones, let tombstone = try ItemTable.sibling(of: fresh, tombstone: true, in: db) {
            if try ItemTable.sibling(of: fresh, tombstone: false, in: db) != nil { throw KeychainError(.duplicateItem) }
            let row = reseal(tombstone.id, tombstone.version + 1, tombstone.rowID)
            // An update of the row: its trigger marks a synchronizable item.
            try ItemTable.replace(row, in: db)
            if !indexingLater { try IndexTable.insert(row, rowID: tombstone.rowID, in: db) }
            try record(.added, row, rowID: tombstone.rowID, origin: origin, in: db, deferred: deferred)
            return row
        }
        return try insert(
            fresh, origin: origin, markDirty: fresh.synchronizable, in: db, indexingLater: indexingLater,
            deferred: deferred)
    }

    /// Inserts a new row with its index entries (unless `indexingLater`), its change-feed entry and — with
    /// `markDirty` — its dirty mark, the last two into `deferred` when given. A live item with the same
    /// primary key is `errSecDuplicateItem` (the unique index covers live items only).
    private static func insert(
        _ row: ItemRow, origin: KeychainChange.Origin, markDirty: Bool, in db: Connection, indexingLater: Bool,
        deferred: DeferredItemWrites?
    ) throws -> ItemRow {
        var stored = row
        do {
            stored.rowID = try ItemTable.insert(row, in: db)
        } catch let error as StorageError where error.isConstraintViolation {
            throw KeychainError(.duplicateItem)
        }
        let rowID = stored.rowID!
        if !indexingLater { try IndexTable.insert(stored, rowID: rowID, in: db) }
        try record(.added, stored, rowID: rowID, origin: origin, in: db, deferred: deferred)
        if markDirty {
            if let deferred {
                deferred.markDirty(row.id)
            } else {
                try db.run("INSERT OR IGNORE INTO sync_dirty (item) VALUES (?)", [.blob(row.id)])
            }
        }
        return stored
    }

    /// Records a change now, or into `deferred`.
    private static func record(
        _ kind: KeychainChange.Kind, _ row: ItemRow, rowID: Int64, origin: KeychainChange.Origin, in db: Connection,
        deferred: DeferredItemWrites?
    ) throws {
        if let deferred {
            deferred.record(kind, row, rowID: rowID, origin: origin)
        } else {
            try ChangeLog.record(kind, row, rowID: rowID, origin: origin, in: db)
        }
    }

    /// Rewrites an item (`old` as it was read, `new` with the same row number and a higher version). Onto
    /// a primary key another live item holds: `errSecDuplicateItem`. A tombstone with that key stays where it
    /// is — it is another item's deletion, which must still sync.
    static func update(
        _ old: ItemRow, to new: ItemRow, keepingData: Bool, origin: KeychainChange.Origin, in db: Connection
    ) throws {
        if try ItemTable.sibling(of: new, tombstone: false, in: db, excluding: new.rowID) != nil {
            throw KeychainError(.duplicateItem, "the update would give two items the same primary key")
        }
        if keepingData {
            try ItemTable.replaceKeepingData(new, in: db)
        } else {
            try ItemTable.replace(new, in: db)
        }
        try IndexTable.remove(old, in: db)
        try IndexTable.insert(new, rowID: new.rowID!, in: db)
        try ChangeLog.record(.updated, new, rowID: new.rowID!, origin: origin, in: db)
    }

    /// Removes an item that does not sync (or, from sync, one another device deleted), with its index entries.
    static func delete(_ row: ItemRow, origin: KeychainChange.Origin = .request, in db: Connection) throws {
        try IndexTable.remove(row, in: db)
        try ItemTable.delete(rowID: row.rowID!, in: db)
        try AccessListTable.removeAll(item: row.id, in: db)
        try ChangeLog.record(.deleted, row, rowID: row.rowID!, origin: origin, in: db)
    }

    /// Stores an item another device made, under its own id and version (never over a tombstone's id, as
    /// `add` does: sync names items by id). A live item with the same primary key is `errSecDuplicateItem`.
    /// `indexingLater`: the caller inserts the returned row's index entries itself (a page sorts them);
    /// `deferred`: its change-feed entry goes there. Written by sync (`origin` `.sync`), the item is as the
    /// server has it and gets no dirty mark; otherwise (a conflict restored here) it is marked, to be pushed.
    static func addSynced(
        _ row: ItemRow, origin: KeychainChange.Origin = .sync, in db: Connection, indexingLater: Bool = false,
        deferred: DeferredItemWrites? = nil
    ) throws
        -> ItemRow
    {
        try insert(
            row, origin: origin, markDirty: row.synchronizable && origin != .sync, in: db,
            indexingLater: indexingLater, deferred: deferred)
    }

    /// Turns a synchronizable item into its tombstone (`tombstone`: the same row, sealed again without its
    /// secret, with the next version), dropping its index entries.
    static func tombstone(
        _ old: ItemRow, as tombstone: ItemRow, origin: KeychainChange.Origin = .request, in db: Connection
    ) throws {
        try IndexTable.remove(old, in: db)
        try ItemTable.replace(tombstone, in: db)
        try AccessListTable.removeAll(item: old.id, in: db)
        try ChangeLog.record(.tombstoned, tombstone, rowID: tombstone.rowID!, origin: origin, in: db)
    }
}
