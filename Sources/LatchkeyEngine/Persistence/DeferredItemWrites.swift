import FoundationEssentials
internal import LatchkeyStorage

/// What the new items of a bulk write (a batch add, a page of sync) leave to its end: their change-feed
/// entries and the dirty marks of the synchronizable ones, written by `flush` in statements of many rows
/// instead of one statement each. The same rows as `ItemStore` writes item by item — the change feed in
/// the order the items were stored, the marks in id order (the table's key) —, in the same transaction.
/// A class so that the one funnel, `ItemStore`, can take it as an optional argument; it lives for one
/// transaction on one thread.
final class DeferredItemWrites {
    private var changes: [SQLValue] = []
    private var dirty: [Data] = []

    /// A change to record (after those recorded before it).
    func record(_ kind: KeychainChange.Kind, _ row: ItemRow, rowID: Int64, origin: KeychainChange.Origin) {
        changes += ChangeLog.values(kind, row, rowID: rowID, origin: origin)
    }

    /// An item to mark as written since sync last looked (`sync_dirty`).
    func markDirty(_ itemID: Data) { dirty.append(itemID) }

    /// Writes what is deferred, and forgets it.
    func flush(in db: Connection) throws {
        if !changes.isEmpty {
            try ChangeLog.recordAll(changes, in: db)
            changes.removeAll(keepingCapacity: true)
        }
        guard !dirty.isEmpty else { return }
        let sorted = dirty.map { (key: ItemDigests.orderKey($0), id: $0) }.sorted { $0.key < $1.key }.map(\.id)
        for chunk in KeychainSync.chunks(of: sorted) {
            let placeholders = Array(repeating: "(?)", count: chunk.count).joined(separator: ", ")
            try db.run("INSERT OR IGNORE INTO sync_dirty (item) VALUES \(placeholders)", chunk.map { .blob($0) })
        }
        dirty.removeAll(keepingCapacity: true)
    }
}
