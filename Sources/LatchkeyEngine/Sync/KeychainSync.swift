package import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyStorage

extension KeychainDatabase {
    /// The keychain's side of sync, for LatchkeySync: `database.sync.outgoing(after:limit:)`,
    /// `.prepare(_:except:)` and `.write(_:cursor:sealer:decide:)` for pulled pages, `.acknowledge(_:)`, the
    /// conflicts and the rejections.
    package var sync: KeychainSync { KeychainSync(database: self) }
}

/// The keychain's side of sync (package API for LatchkeySync, reached as `database.sync`): what to push, what
/// the server holds, the inbox of pulled rows, applying another device's versions, and the conflict and
/// rejection records. Every method is one transaction; the sync layer does the cryptography and talks to the
/// server.
package struct KeychainSync: Sendable {
    /// The keychain whose sync state this reads and writes.
    let database: KeychainDatabase
    typealias PreparedAdd = KeychainDatabase.PreparedAdd
    typealias BatchContext = KeychainDatabase.BatchContext

    /// The accessibility classes that sync (never a `…ThisDeviceOnly` one), as SQL.
    private static let syncingClasses = "('ak', 'ck', 'dk')"
    /// `ItemTable.selectColumns` of the `items` table aliased `i`.
    private static let qualifiedColumns = ItemTable.selectColumns.split(separator: ", ").map { "i." + $0 }.joined(
        separator: ", ")

    // MARK: State

    /// A value of the sync state (`vault`, `device`, `cursor`…), nil when unset.
    package func value(_ name: String) throws(KeychainError) -> Data? {
        try mappingStorageErrors {
            try database.pool.read { db in
                var value: Data?
                try db.forEachRow("SELECT value FROM sync_state WHERE name = ?", [.text(name)]) { value = $0.blob(0) }
                return value
            }
        }
    }

    /// Sets (or with nil removes) values of the sync state together.
    package func setValues(_ values: [String: Data?]) throws(KeychainError) {
        try mappingStorageErrors {
            try database.pool.write { db in
                for (name, value) in values {
                    if let value {
                        try db.run(
                            "INSERT OR REPLACE INTO sync_state (name, value) VALUES (?, ?)",
                            [.text(name), .blob(value)])
                    } else {
                        try db.run("DELETE FROM sync_state WHERE name = ?", [.text(name)])
                    }
                }
            }
        }
    }

    /// Forgets everything sync knew (leaving a vault, or before joining one): state, server versions, inbox,
    /// conflicts, rejections; every synchronizable item is to be looked at by the next push. The items stay.
    package func reset() throws(KeychainError) {
        try mappingStorageErrors {
            try database.pool.write { db in
                try db.execute(
                    """
                    DELETE FROM sync_state; DELETE FROM sync_items; DELETE FROM sync_inbox; DELETE FROM sync_conflicts;
                    DELETE FROM sync_rejected; DELETE FROM sync_dirty;
                    INSERT INTO sync_dirty (item) SELECT DISTINCT id FROM items WHERE sync = 1;
                    """)
            }
        }
    }

    /// Counts for `latchkey sync status`: local changes waiting to be pushed, rows waiting in the inbox,
    /// conflicts and rejections.
    package func counts() throws(KeychainError) -> (pending: Int, inbox: Int, conflicts: Int, rejected: Int) {
        try mappingStorageErrors {
            try database.pool.read { db in
                let pending =
                    try db.integer(
                        """
                        SELECT count(*) FROM sync_dirty d LEFT JOIN items i ON i.id = d.item LEFT JOIN sync_items s ON s.item = d.item
                        WHERE (i.sync = 1 AND i.pdmn IN \(Self.syncingClasses) AND ((s.item IS NULL AND i.tomb = 0) OR s.version != i.version))
                           OR (s.deleted = 0 AND (i.id IS NULL OR i.sync = 0 OR i.pdmn NOT IN \(Self.syncingClasses)))
                        """) ?? 0
                return (
                    Int(pending), Int(try db.integer("SELECT count(*) FROM sync_inbox") ?? 0),
                    Int(try db.integer("SELECT count(*) FROM sync_conflicts") ?? 0),
                    Int(try db.integer("SELECT count(*) FROM sync_rejected") ?? 0)
                )
            }
        }
    }

    // MARK: Push

    /// Local changes to push, at most `limit`, among the items written since sync last looked (`sync_dirty`,
    /// in id order after `after`): synchronizable items (not `…ThisDeviceOnly`) whose version is not the one
    /// the server holds, tombstones included, and deletions no row shows — synced items that are gone or no
    /// longer sync. `waiting` counts those whose class key is unavailable (pushed after unlock: a locked
    /// device pushes nothing it cannot decrypt); `last` is the last id looked at (nil when none were left).
    /// Items found to need nothing leave `sync_dirty`.
    package func outgoing(after: Data?, limit: Int) throws(KeychainError) -> (
        items: [SyncOutgoing], waiting: Int, last: Data?
    ) {
        let keys = database.vault.snapshot()
        return try mappingStorageErrors {
            try database.pool.write { db in
                var items: [SyncOutgoing] = []
                var waiting = 0
                var last: Data?
                var clean: [Data] = []
                var ids: [Data] = []
                try db.forEachRow(
                    "SELECT item FROM sync_dirty WHERE item > ? ORDER BY item LIMIT ?",
                    [.blob(after ?? Data()), .integer(Int64(limit))]
                ) { row in
                    if let id = row.blob(0) { ids.append(id) }
                }
                for id in ids {
                    last = id
                    let known = try Self.known(id, in: db)
                    let row = try ItemTable.row(id: id, in: db)
                    if let row, row.synchronizable, !row.accessibility.isThisDeviceOnly, !row.malformed {
                        guard row.version != (known?.version ?? 0), !(row.tombstone && known == nil) else {
                            clean.append(id)
                            continue
                        }
                        guard keys.classKey(for: row.accessibility) != nil else {
                            waiting += 1
                            continue
                        }
                        items.append(
                            SyncOutgoing(
                                record: try Self.record(of: row, keys: keys), expectedVersion: known?.version ?? 0))
                    } else if let known, !known.deleted {
                        items.append(
                            SyncOutgoing(
                                record: SyncRecord(
                                    itemID: id, version: known.version + 1, deleted: true, itemClass: .genericPassword,
                                    attributes: [:], data: nil),
                                expectedVersion: known.version))
                    } else {
                        clean.append(id)
                    }
                }
                for id in clean { try db.run("DELETE FROM sync_dirty WHERE item = ?", [.blob(id)]) }
                return (items, waiting, last)
            }
        }
    }

    /// Records what the server now holds for pushed items (each one's version and deleted flag).
    package func acknowledge(_ items: [(itemID: Data, version: Int64, deleted: Bool)]) throws(KeychainError) {
        try mappingStorageErrors {
            try database.pool.write { db in
                for item in items {
                    try Self.setKnown(item.itemID, version: item.version, deleted: item.deleted, in: db)
                    // Rows of this item pulled earlier and not applied yet are history now: the server took this
                    // version over the one this device knew, which they led up to.
                    try db.run(
                        "DELETE FROM sync_inbox WHERE item = ? AND version <= ?",
                        [.blob(item.itemID), .integer(item.version)])
                    // Unless the item changed again meanwhile (its row's version moved on), nothing is left to push.
                    let current = try ItemTable.row(id: item.itemID, in: db)
                    if current == nil || current?.version == item.version {
                        try db.run("DELETE FROM sync_dirty WHERE item = ?", [.blob(item.itemID)])
                    }
                }
            }
        }
    }

    /// The version of an item the server holds as far as this device knows (nil: none yet).
    package func knownVersion(_ itemID: Data) throws(KeychainError) -> (version: Int64, deleted: Bool)? {
        try mappingStorageErrors { try database.pool.read { db in try Self.known(itemID, in: db) } }
    }

    // MARK: Pull

    /// The server cursor: the highest change sequence pulled (0 before the first pull).
    package func cursor() throws(KeychainError) -> Int64 {
        guard let stored = try value("cursor") else { return 0 }
        return Self.decodeInteger(stored)
    }

    /// Moves the pages a run of `write`s left in the WAL into the main file (they commit without the usual
    /// checkpoint: `DatabasePool.bulkWrite`), so the next small write does not pay for them. After a pull.
    package func checkpoint() throws(KeychainError) {
        try mappingStorageErrors { try database.pool.checkpoint() }
    }

    /// How many rows wait in the inbox.
    package func inboxCount() throws(KeychainError) -> Int {
        try mappingStorageErrors {
            try database.pool.read { db in Int(try db.integer("SELECT count(*) FROM sync_inbox") ?? 0) }
        }
    }

    /// Inbox rows in the server's order, at most `limit`.
    package func inbox(limit: Int) throws(KeychainError) -> [SyncEnvelope] {
        try mappingStorageErrors {
            try database.pool.read { db in
                var envelopes: [SyncEnvelope] = []
                try db.forEachRow(
                    "SELECT seq, item, version, deleted, key_id, ciphertext, author FROM sync_inbox ORDER BY seq LIMIT ?",
                    [.integer(Int64(limit))]
                ) { row in
                    envelopes.append(
                        SyncEnvelope(
                            sequence: row.integer(0), itemID: row.blob(1) ?? Data(), version: row.integer(2),
                            deleted: row.integer(3) != 0,
                            keyID: Int32(truncatingIfNeeded: row.integer(4)), ciphertext: row.blob(5) ?? Data(),
                            author: row.blob(6) ?? Data()))
                }
                return envelopes
            }
        }
    }

    /// The rows refused so far, newest last.
    package func rejections() throws(KeychainError) -> [SyncRejection] {
        try mappingStorageErrors {
            try database.pool.read { db in
                var rejections: [SyncRejection] = []
                try db.forEachRow("SELECT seq, item, version, reason, recorded FROM sync_rejected ORDER BY id") { row in
                    rejections.append(
                        SyncRejection(
                            sequence: row.integer(0), itemID: row.blob(1) ?? Data(), version: row.integer(2),
                            reason: row.text(3) ?? "",
                            recorded: Date(timeIntervalSince1970: Double(row.integer(4)))))
                }
                return rejections
            }
        }
    }

    /// The known server versions of many items at once.
    package func knownVersions(_ itemIDs: [Data]) throws(KeychainError) -> [Data: (version: Int64, deleted: Bool)] {
        try mappingStorageErrors {
            try database.pool.read { db in
                var known: [Data: (version: Int64, deleted: Bool)] = [:]
                for id in Set(itemIDs) { if let value = try Self.known(id, in: db) { known[id] = value } }
                return known
            }
        }
    }

    /// A synced record's add, validated and sealed (errSecDecode when it lacks what every synced item has).
    /// `modified` replaces the record's modification date (a restored conflict is changed now);
    /// `groupDigests` holds the digests of access groups already computed (a page's few groups, once).
    func prepareSynced(
        _ record: SyncRecord, keys: KeyVault.Snapshot, modified now: Date? = nil, groupDigests: [String: Data] = [:]
    )
        throws(KeychainError)
        -> PreparedAdd
    {
        var attributes = record.attributes
        let created = attributes[.creationDate]?.dateValue ?? Date()
        let modified = now ?? attributes[.modificationDate]?.dateValue ?? created
        attributes[.creationDate] = nil
        attributes[.modificationDate] = nil
        guard let group = attributes[.accessGroup]?.stringValue, record.attributes[.synchronizable] == .number(1),
            let accessibility = attributes[.accessible]?.stringValue.flatMap(Accessibility.init(rawValue:)),
            !accessibility.isThisDeviceOnly
        else { throw KeychainError.decode("a synced item lacks its access group, sync flag or a class that syncs") }
        let caller = CallerIdentity(applicationIdentifier: "com.latchkey.sync", accessGroups: [group])
        return try database.prepareAdd(
            NewItem(record.itemClass, attributes: attributes, data: record.data), caller: caller,
            dates: (created, modified), batch: BatchContext(keys: keys, groupDigests: groupDigests))
    }

    /// Applies one verified record in the caller's write transaction. `sealed` is its add sealed as a row
    /// (`prepare`; nil for a deletion), `known` the version the server holds as far as this device knew
    /// before it. `index`, when given, takes a new item's index entries (digest, row) instead of inserting
    /// them; `removed` hears of every row this removes or turns into a tombstone.
    func apply(
        _ record: SyncRecord, sealed: ItemRow?, known: (version: Int64, deleted: Bool)?, keys: KeyVault.Snapshot,
        sealer: SyncConflictSealer, in db: Connection, index: ((Data, Int64) -> Void)? = nil,
        removed: (Int64) -> Void = { _ in }
    ) throws
        -> SyncApplyOutcome
    {
        let local = try ItemTable.row(id: record.itemID, in: db)
        var outcome = SyncApplyOutcome.applied
        if let local, local.version != (known?.version ?? 0), !(local.tombstone && record.deleted) {
            // Changed here and not pushed yet: the server's version came first and wins.
            guard keys.classKey(for: local.accessibility) != nil else { return .locked }
            let loser = try Self.record(of: local, keys: keys)
            try Self.keepConflict(
                loser, reason: "changed on this device while another device's change reached the server first",
                sealer: sealer, in: db)
            outcome = .appliedOverConflict
        }
        if record.deleted {
            if let local {
                try ItemStore.delete(local, origin: .sync, in: db)
                local.rowID.map(removed)
            }
        } else if var row = sealed {
            row.rowID = local?.rowID
            let clash: (rowID: Int64, id: Data, version: Int64)?
            if local == nil {
                // A new item: the unique index on live primary keys says whether another item holds its key, so
                // the common case costs the insert alone.
                do {
                    try Self.addSynced(row, index: index, in: db)
                    try Self.setKnown(record.itemID, version: record.version, deleted: false, in: db)
                    return outcome
                } catch KeychainError.duplicateItem {
                    clash = try ItemTable.sibling(of: row, tombstone: false, in: db)
                }
            } else {
                clash = try ItemTable.sibling(of: row, tombstone: false, in: db, excluding: local?.rowID)
            }
            if let clash {
                if ByteOrder.precedes(clash.id, record.itemID) {
                    // The local item has the lower id: it wins here as everywhere; this record is kept.
                    try Self.keepConflict(
                        record, reason: "another item with the same primary key has the lower id",
                        sealer: sealer, in: db)
                    if let local {
                        try ItemStore.delete(local, origin: .sync, in: db)
                        local.rowID.map(removed)
                    }
                    try Self.setKnown(record.itemID, version: record.version, deleted: false, in: db)
                    // Its deletion goes to the server with the next push (every device settles on the lower id).
                    try db.run("INSERT OR IGNORE INTO sync_dirty (item) VALUES (?)", [.blob(record.itemID)])
                    return .lostToExistingItem
                }
                guard let other = try ItemTable.row(id: clash.id, in: db) else {
                    throw KeychainError(.internal, "an item's primary key names a row that is gone")
                }
                guard let otherKey = keys.classKey(for: other.accessibility) else { return .locked }
                let loser = try Self.record(of: other, keys: keys)
                try Self.keepConflict(
                    loser, reason: "another device added an item with the same primary key and a lower id",
                    sealer: sealer, in: db)
                if try Self.known(other.id, in: db) != nil {
                    // The server has it: its deletion must travel (the tombstone is pushed).
                    let tombstone = KeychainDatabase.tombstoneRow(
                        of: other, attributes: loser.attributes, classKey: otherKey)
                    try ItemStore.tombstone(other, as: tombstone, origin: .sync, in: db)
                    other.rowID.map(removed)
                } else {
                    try ItemStore.delete(other, origin: .sync, in: db)
                    other.rowID.map(removed)
                }
                outcome = .appliedOverConflict
            }
            if let local {
                try ItemStore.update(local, to: row, keepingData: false, origin: .sync, in: db)
            } else {
                try Self.addSynced(row, index: index, in: db)
            }
        }
        try Self.setKnown(record.itemID, version: record.version, deleted: record.deleted, in: db)
        return outcome
    }

    /// Stores a new synced row, its index entries handed to `index` when given (inserted at once otherwise),
    /// its change-feed entry into `deferred` when given.
    static func addSynced(
        _ row: ItemRow, index: ((Data, Int64) -> Void)?, in db: Connection, deferred: DeferredItemWrites? = nil
    ) throws {
        let stored = try ItemStore.addSynced(row, in: db, indexingLater: index != nil, deferred: deferred)
        if let index, let rowID = stored.rowID { for digest in stored.indexDigests { index(digest, rowID) } }
    }

    /// After a full resync: items the server no longer has at all (their tombstones were collected) are
    /// deleted here, unless changed here since (those are pushed again as new). `present` is every item id
    /// the server holds.
    package func forgetMissing(present: Set<Data>) throws(KeychainError) -> Int {
        try mappingStorageErrors {
            try database.pool.write { db in
                var gone: [Data] = []
                try db.forEachRow("SELECT item FROM sync_items") { row in
                    if let id = row.blob(0), !present.contains(id) { gone.append(id) }
                }
                var removed = 0
                for id in gone {
                    let known = try Self.known(id, in: db)
                    try db.run("DELETE FROM sync_items WHERE item = ?", [.blob(id)])
                    guard let local = try ItemTable.row(id: id, in: db) else { continue }
                    if local.tombstone || local.version == known?.version {
                        try ItemStore.delete(local, origin: .sync, in: db)
                        removed += 1
                    } else {
                        try db.run("INSERT OR IGNORE INTO sync_dirty (item) VALUES (?)", [.blob(id)])
                    }
                }
                return removed
            }
        }
    }

    /// After the server went back in time: each synced item's known version becomes what the server holds
    /// when that is older (or nothing, when the server lost the item), and the item is marked for the next
    /// push — so what the server lost is pushed again, with the server's version as the expected one.
    package func rebase(onto server: [Data: (version: Int64, deleted: Bool)]) throws(KeychainError) {
        try mappingStorageErrors {
            try database.pool.write { db in
                var known: [(Data, Int64, Bool)] = []
                try db.forEachRow("SELECT item, version, deleted FROM sync_items") { row in
                    if let id = row.blob(0) { known.append((id, row.integer(1), row.integer(2) != 0)) }
                }
                for (id, version, _) in known {
                    if let held = server[id] {
                        guard held.version < version else { continue }
                        try Self.setKnown(id, version: held.version, deleted: held.deleted, in: db)
                    } else {
                        try db.run("DELETE FROM sync_items WHERE item = ?", [.blob(id)])
                    }
                    try db.run("INSERT OR IGNORE INTO sync_dirty (item) VALUES (?)", [.blob(id)])
                }
            }
        }
    }

    // MARK: Conflicts

    /// The conflict records, oldest first.
    package func conflicts() throws(KeychainError) -> [SyncConflict] {
        try mappingStorageErrors {
            try database.pool.read { db in
                var conflicts: [SyncConflict] = []
                try db.forEachRow(
                    "SELECT id, item, version, key_id, sealed, reason, recorded FROM sync_conflicts ORDER BY id"
                ) { row in
                    conflicts.append(
                        SyncConflict(
                            id: row.integer(0), itemID: row.blob(1) ?? Data(), version: row.integer(2),
                            keyID: Int32(truncatingIfNeeded: row.integer(3)), sealed: row.blob(4) ?? Data(),
                            reason: row.text(5) ?? "",
                            recorded: Date(timeIntervalSince1970: Double(row.integer(6)))))
                }
                return conflicts
            }
        }
    }

    /// Drops a conflict record; errSecItemNotFound when there is none with that number.
    package func dropConflict(_ id: Int64) throws(KeychainError) {
        try mappingStorageErrors {
            try database.pool.write { db in
                guard try db.integer("SELECT count(*) FROM sync_conflicts WHERE id = ?", [.integer(id)]) == 1 else {
                    throw KeychainError(.itemNotFound, "there is no conflict \(id)")
                }
                try db.run("DELETE FROM sync_conflicts WHERE id = ?", [.integer(id)])
            }
        }
    }

    /// Restores a losing version (conflict `id`, opened by the sync layer into `record`) as a local change:
    /// the item takes its content again with a new version, which the next push sends; another live item
    /// with its primary key is errSecDuplicateItem. The conflict record goes.
    package func restoreConflict(_ id: Int64, record: SyncRecord) throws(KeychainError) {
        guard !record.deleted else {
            throw KeychainError.param("conflict \(id) is a deletion; there is nothing to restore")
        }
        let prepared = try prepareSynced(record, keys: database.vault.snapshot(), modified: Date())
        try mappingStorageErrors {
            try database.pool.write { db in
                guard try db.integer("SELECT count(*) FROM sync_conflicts WHERE id = ?", [.integer(id)]) == 1 else {
                    throw KeychainError(.itemNotFound, "there is no conflict \(id)")
                }
                let local = try ItemTable.row(id: record.itemID, in: db)
                let known = try Self.known(record.itemID, in: db)
                let version = max(local?.version ?? 0, known?.version ?? 0, record.version) + 1
                let row = prepared.sealed(id: record.itemID, version: version, rowID: local?.rowID)
                if let local {
                    try ItemStore.update(local, to: row, keepingData: false, origin: .request, in: db)
                } else {
                    do {
                        _ = try ItemStore.addSynced(row, origin: .request, in: db)
                    } catch KeychainError.duplicateItem {
                        throw KeychainError(.duplicateItem, "another item has conflict \(id)'s primary key")
                    }
                }
                try db.run("DELETE FROM sync_conflicts WHERE id = ?", [.integer(id)])
            }
        }
    }

    // MARK: Helpers

    private static func record(of row: ItemRow, keys: KeyVault.Snapshot) throws(KeychainError) -> SyncRecord {
        let opened = try ItemSelection.open(row, keys: keys, attributes: true)
        let data = row.tombstone ? nil : try ItemSealing.openData(row, itemKey: opened.itemKey)
        return SyncRecord(
            itemID: row.id, version: row.version, deleted: row.tombstone, itemClass: row.itemClass,
            attributes: opened.attributes ?? [:], data: data)
    }

    static func keepConflict(
        _ record: SyncRecord, reason: String, sealer: SyncConflictSealer, in db: Connection
    ) throws {
        let (keyID, sealed) = sealer(record)
        try db.run(
            "INSERT INTO sync_conflicts (item, version, key_id, sealed, reason, recorded) VALUES (?, ?, ?, ?, ?, ?)",
            [
                .blob(record.itemID), .integer(record.version), .integer(Int64(keyID)), .blob(sealed), .text(reason),
                .integer(Int64(Date().timeIntervalSince1970)),
            ])
    }

    static func known(_ itemID: Data, in db: Connection) throws -> (version: Int64, deleted: Bool)? {
        var known: (Int64, Bool)?
        try db.forEachRow("SELECT version, deleted FROM sync_items WHERE item = ?", [.blob(itemID)]) { row in
            known = (row.integer(0), row.integer(1) != 0)
        }
        return known.map { (version: $0.0, deleted: $0.1) }
    }

    static func setKnown(_ itemID: Data, version: Int64, deleted: Bool, in db: Connection) throws {
        try db.run(
            "INSERT OR REPLACE INTO sync_items (item, version, deleted) VALUES (?, ?, ?)",
            [.blob(itemID), .integer(version), .integer(deleted ? 1 : 0)])
    }

    static func encode(_ value: Int64) -> Data { withUnsafeBytes(of: value.bigEndian) { Data($0) } }

    private static func decodeInteger(_ data: Data) -> Int64 {
        data.count == 8 ? data.reduce(Int64(0)) { ($0 << 8) | Int64($1) } : 0
    }
}
