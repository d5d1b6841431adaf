public import FoundationEssentials
internal import LatchkeyStorage

/// One change to the keychain's items, as the change feed records it: what happened to which item, in
/// commit order. It names the item (its random id and persistent reference) but holds no attribute value,
/// no secret and no time — nothing the `items` table does not already show in plaintext.
public struct KeychainChange: Hashable, Sendable, CustomStringConvertible {
    /// What happened.
    public enum Kind: Int, Sendable, CaseIterable {
        /// A new item (or one added over its own tombstone).
        case added = 1
        /// An item's attributes or data changed.
        case updated = 2
        /// An item that does not sync was removed.
        case deleted = 3
        /// A synchronizable item was deleted: its tombstone remains, so the deletion can sync.
        case tombstoned = 4
    }

    /// Why it happened.
    public enum Origin: Int, Sendable {
        /// An add, update or delete request.
        case request = 0
        /// A restore from a backup (`latchkey import`).
        case restore = 1
        /// A change another device made, applied by sync (the agent does not push it back).
        case sync = 2
    }

    /// The position in the feed: increases with every change, in commit order, across processes; never
    /// reused.
    public let sequence: Int64
    /// What happened.
    public let kind: Kind
    /// Why.
    public let origin: Origin
    /// The item's class.
    public let itemClass: ItemClass
    /// The item's random id (stable for its life).
    public let itemID: Data
    /// The item's version after the change (it increases on every change of the item).
    public let version: Int64
    /// Whether the item is synchronizable.
    public let synchronizable: Bool
    /// The item's persistent reference (`kSecValuePersistentRef`): find it with it, unless it was deleted.
    public let persistentReference: Data

    /// `#12 updated genp v3`.
    public var description: String {
        "#\(sequence) \(kind) \(itemClass.rawValue) v\(version)\(synchronizable ? " sync" : "")\(origin == .restore ? " (restore)" : origin == .sync ? " (sync)" : "")"
    }
}

/// The `changes` table: every mutation of an item, appended in the transaction that makes it, so the feed
/// and the items never disagree — not across processes, not after a crash.
enum ChangeLog {
    /// The columns of one change, in the order of `record`'s statement.
    static let columnCount = 7

    static func record(
        _ kind: KeychainChange.Kind, _ row: ItemRow, rowID: Int64, origin: KeychainChange.Origin,
        in db: Connection
    ) throws {
        try db.run(singleInsertion, values(kind, row, rowID: rowID, origin: origin))
    }

    /// `insertion(rows: 1)`, made once.
    private static let singleInsertion = insertion(rows: 1)

    /// One change's values (`columnCount` of them), for `record` or `recordAll`.
    static func values(_ kind: KeychainChange.Kind, _ row: ItemRow, rowID: Int64, origin: KeychainChange.Origin)
        -> [SQLValue]
    {
        [
            .blob(row.id), .integer(rowID), .text(row.itemClass.rawValue), .integer(Int64(kind.rawValue)),
            .integer(row.version), .integer(row.synchronizable ? 1 : 0), .integer(Int64(origin.rawValue)),
        ]
    }

    /// Appends many changes in the order given (`values`: `columnCount` values each, one after another), in
    /// statements of 256, 128, … or 1 rows, so a handful of statement texts is prepared once and reused. The
    /// same rows, in the same order, as `record` one at a time; `seq` still numbers them in that order.
    static func recordAll(_ values: [SQLValue], in db: Connection) throws {
        var start = 0
        while start < values.count {
            let remaining = (values.count - start) / columnCount
            let rows = min(256, 1 << (Int.bitWidth - 1 - remaining.leadingZeroBitCount))
            try db.run(insertion(rows: rows), Array(values[start..<(start + rows * columnCount)]))
            start += rows * columnCount
        }
    }

    /// `INSERT INTO changes` of `rows` rows.
    private static func insertion(rows: Int) -> String {
        "INSERT INTO changes (item, row, class, kind, version, sync, origin) VALUES "
            + Array(repeating: "(?, ?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
    }

    /// The changes after `sequence`, oldest first, at most `limit`.
    static func changes(after sequence: Int64, limit: Int, in db: Connection) throws -> [KeychainChange] {
        var changes: [KeychainChange] = []
        try db.forEachRow(
            "SELECT seq, item, row, class, kind, version, sync, origin FROM changes WHERE seq > ? ORDER BY seq LIMIT ?",
            [.integer(sequence), .integer(Int64(limit))]
        ) { row in
            guard let itemClass = row.text(3).flatMap(ItemClass.init(rawValue:)),
                let kind = KeychainChange.Kind(rawValue: Int(row.integer(4))),
                let origin = KeychainChange.Origin(rawValue: Int(row.integer(7))), let id = row.blob(1)
            else { throw KeychainError.decode("change \(row.integer(0)) of the change feed is malformed") }
            changes.append(
                KeychainChange(
                    sequence: row.integer(0), kind: kind, origin: origin, itemClass: itemClass, itemID: id,
                    version: row.integer(5), synchronizable: row.integer(6) != 0,
                    persistentReference: PersistentReference.make(itemClass: itemClass, rowID: row.integer(2), id: id)))
        }
        return changes
    }

    /// The newest change's sequence (0 before the first change).
    static func lastSequence(in db: Connection) throws -> Int64 {
        try db.integer("SELECT seq FROM changes ORDER BY seq DESC LIMIT 1") ?? 0
    }
}
