import FoundationEssentials
internal import LatchkeyStorage

/// The one funnel every mutation of an item passes through: the row, its index entries and its entry in
/// the change feed are written together, in the caller's write transaction.
enum ItemStore {
    /// Stores a new item. Added over a tombstone of the same primary key, it takes that tombstone's row and
    /// item id with the next version (one history for sync); otherwise it is a new row. A live item with the
    /// same primary key is `errSecDuplicateItem`. `indexingLater`: the caller inserts the index entries
    /// itself (a batch sorts all of them). `checkTombstones` false skips the tombstone lookup when the caller
    /// knows there is none. Returns the row as stored (with its number).
    static func add(
        _ fresh: ItemRow, reseal: (Data, Int64, Int64?) -> ItemRow, origin: KeychainChange.Origin, in db: Connection,
        indexingLater: Bool = false, checkTombstones: Bool = true
    ) throws -> ItemRow {
        if checkTombstones, let tombstone = try ItemTable.sibling(of: fresh, tombstone: true, in: db) {
            if try ItemTable.sibling(of: fresh, tombstone: false, in: db) != nil { throw KeychainError(.duplicateItem) }
            let row = reseal(tombstone.id, tombstone.version + 1, tombstone.rowID)
            try ItemTable.replace(row, in: db)
            if !indexingLater { try IndexTable.insert(row, rowID: tombstone.rowID, in: db) }
            try ChangeLog.record(.added, row, rowID: tombstone.rowID, origin: origin, in: db)
            return row
        }
        var stored = fresh
        do {
            stored.rowID = try ItemTable.insert(fresh, in: db)
        } catch let error as StorageError where error.isConstraintViolation {
            // The unique index covers live items only: this is a duplicate.
            throw KeychainError(.duplicateItem)
        }
        if !indexingLater { try IndexTable.insert(stored, rowID: stored.rowID!, in: db) }
        try ChangeLog.record(.added, stored, rowID: stored.rowID!, origin: origin, in: db)
        return stored
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
        try ChangeLog.record(.deleted, row, rowID: row.rowID!, origin: origin, in: db)
    }

    /// Stores an item another device made, under its own id and version (never over a tombstone's id, as
    /// `add` does: sync names items by id). A live item with the same primary key is `errSecDuplicateItem`.
    /// `indexingLater`: the caller inserts the returned row's index entries itself (a page sorts them).
    static func addSynced(
        _ row: ItemRow, origin: KeychainChange.Origin = .sync, in db: Connection, indexingLater: Bool = false
    ) throws
        -> ItemRow
    {
        var stored = row
        do {
            stored.rowID = try ItemTable.insert(row, in: db)
        } catch let error as StorageError where error.isConstraintViolation {
            throw KeychainError(.duplicateItem)
        }
        if !indexingLater { try IndexTable.insert(stored, rowID: stored.rowID!, in: db) }
        try ChangeLog.record(.added, stored, rowID: stored.rowID!, origin: origin, in: db)
        return stored
    }

    /// Turns a synchronizable item into its tombstone (`tombstone`: the same row, sealed again without its
    /// secret, with the next version), dropping its index entries.
    static func tombstone(
        _ old: ItemRow, as tombstone: ItemRow, origin: KeychainChange.Origin = .request, in db: Connection
    ) throws {
        try IndexTable.remove(old, in: db)
        try ItemTable.replace(tombstone, in: db)
        try ChangeLog.record(.tombstoned, tombstone, rowID: tombstone.rowID!, origin: origin, in: db)
    }
}
