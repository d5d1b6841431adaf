import FoundationEssentials
internal import LatchkeyStorage

/// The `items` table: its one list of columns and its row codec. Every statement that reads or writes an
/// item row is here; the mutations are reached only through `ItemStore`, which logs each one.
enum ItemTable {
    /// The columns a row is read with, in the order `decode` expects; `data` is read only when asked for.
    static let selectColumns =
        "row_id, id, pdmn, sync, tomb, version, agrp, pk, idx, item_key, attrs, data IS NOT NULL, acl"
    /// The position of `data` after `selectColumns` when it is read, and of `class` after that.
    static let dataColumn: Int32 = 13, classColumn: Int32 = 14
    /// The blob columns `decode` reads: id, agrp, pk, idx, item_key, attrs (and data).
    private static let blobColumns: [Int32] = [1, 6, 7, 8, 9, 10], blobColumnsWithData = blobColumns + [dataColumn]

    /// A selected row as an `ItemRow` (in the order of `selectColumns`, then `data` when `includeData`). A row
    /// whose plaintext columns are not even well-formed is marked malformed (reported as damaged).
    static func decode(_ row: Statement, itemClass: ItemClass, includeData: Bool) -> ItemRow {
        // One buffer for the row's blobs (they are read for every candidate of every search).
        let blobs = row.blobs(includeData ? Self.blobColumnsWithData : Self.blobColumns)
        guard let id = blobs[0], let pdmnText = row.text(2), let accessibility = Accessibility(rawValue: pdmnText),
            let groupDigest = blobs[1], let primaryKey = blobs[2], let index = blobs[3],
            let wrappedKey = blobs[4], let attributes = blobs[5]
        else {
            return ItemRow(
                rowID: row.integer(0), id: row.blob(1) ?? Data(), itemClass: itemClass, groupDigest: Data(),
                accessibility: .whenUnlocked, synchronizable: false, tombstone: false, version: 0,
                primaryKeyDigest: Data(), indexBlob: Data(), wrappedKey: Data(), sealedAttributes: Data(),
                sealedData: nil, malformed: true)
        }
        // Whole digests only (a damaged column's tail is not one, and is not bound into the key's AD).
        let whole = index.count - index.count % ItemDigests.shortLength
        return ItemRow(
            rowID: row.integer(0), id: id, itemClass: itemClass, groupDigest: groupDigest,
            accessibility: accessibility, synchronizable: row.integer(3) != 0, tombstone: row.integer(4) != 0,
            version: row.integer(5), primaryKeyDigest: primaryKey,
            indexBlob: whole == index.count ? index : index.prefix(whole),
            wrappedKey: wrappedKey, sealedAttributes: attributes, sealedData: includeData ? blobs[6] : nil,
            hasData: row.integer(11) != 0, accessControlFlags: UInt(truncatingIfNeeded: row.integer(12)))
    }

    /// The values of every column but `row_id`, in the order of `insert`'s statement.
    private static func values(_ row: ItemRow) -> [SQLValue] {
        let index = row.indexBlob
        return [
            .blob(row.id), .text(row.itemClass.rawValue), .blob(row.groupDigest), .text(row.accessibility.rawValue),
            .integer(row.synchronizable ? 1 : 0), .integer(row.tombstone ? 1 : 0), .integer(row.version),
            .blob(row.primaryKeyDigest), .blob(index), .blob(row.wrappedKey), .blob(row.sealedAttributes),
            row.sealedData.map { .blob($0) } ?? .null, .integer(Int64(truncatingIfNeeded: row.accessControlFlags)),
        ]
    }

    /// Inserts a new row; returns its row number.
    static func insert(_ row: ItemRow, in db: Connection) throws -> Int64 {
        try db.run(
            """
            INSERT INTO items (id, class, agrp, pdmn, sync, tomb, version, pk, idx, item_key, attrs, data, acl)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, values(row))
        return db.lastInsertedRowID
    }

    /// Rewrites every column of the row numbered `row.rowID`.
    static func replace(_ row: ItemRow, in db: Connection) throws {
        try db.run(
            """
            UPDATE items SET id = ?, class = ?, agrp = ?, pdmn = ?, sync = ?, tomb = ?, version = ?, pk = ?,
            idx = ?, item_key = ?, attrs = ?, data = ?, acl = ? WHERE row_id = ?
            """, values(row) + [.integer(row.rowID!)])
    }

    /// Rewrites every column but `data`, whose ciphertext stays valid under the same item key.
    static func replaceKeepingData(_ row: ItemRow, in db: Connection) throws {
        let index = row.indexBlob
        try db.run(
            """
            UPDATE items SET agrp = ?, pdmn = ?, sync = ?, tomb = ?, version = ?, pk = ?, idx = ?, item_key = ?,
            attrs = ?, acl = ? WHERE row_id = ?
            """,
            [
                .blob(row.groupDigest), .text(row.accessibility.rawValue), .integer(row.synchronizable ? 1 : 0),
                .integer(row.tombstone ? 1 : 0), .integer(row.version), .blob(row.primaryKeyDigest), .blob(index),
                .blob(row.wrappedKey), .blob(row.sealedAttributes),
                .integer(Int64(truncatingIfNeeded: row.accessControlFlags)),
                .integer(row.rowID!),
            ])
    }

    /// Removes a row (its freed pages are zeroed: `secure_delete`).
    static func delete(rowID: Int64, in db: Connection) throws {
        try db.run("DELETE FROM items WHERE row_id = ?", [.integer(rowID)])
    }

    /// Where a row with the same primary key, class, group and sync flag as `row` is: the live one, or
    /// (`tombstone`) the tombstone. Each is found through its own partial index.
    static func sibling(of row: ItemRow, tombstone: Bool, in db: Connection, excluding rowID: Int64? = nil) throws
        -> (rowID: Int64, id: Data, version: Int64)?
    {
        var found: (Int64, Data, Int64)?
        try db.forEachRow(
            """
            SELECT row_id, id, version FROM items
            WHERE pk = ? AND agrp = ? AND sync = ? AND tomb = \(tombstone ? 1 : 0) AND class = ? AND row_id != ?
            """,
            [
                .blob(row.primaryKeyDigest), .blob(row.groupDigest), .integer(row.synchronizable ? 1 : 0),
                .text(row.itemClass.rawValue), .integer(rowID ?? -1),
            ]
        ) { statement in
            found = (statement.integer(0), statement.blob(1) ?? Data(), statement.integer(2))
        }
        return found.map { (rowID: $0.0, id: $0.1, version: $0.2) }
    }

    /// The row (tombstone or live, with its data) whose random id is `id`, through `items_by_id`.
    static func row(id: Data, in db: Connection) throws -> ItemRow? {
        var found: ItemRow?
        try db.forEachRow("SELECT \(selectColumns), data, class FROM items WHERE id = ?", [.blob(id)]) { row in
            let itemClass = row.text(classColumn).flatMap(ItemClass.init(rawValue:)) ?? .genericPassword
            var decoded = decode(row, itemClass: itemClass, includeData: true)
            if row.text(classColumn).flatMap(ItemClass.init(rawValue:)) == nil { decoded.malformed = true }
            found = decoded
        }
        return found
    }

    /// Which of `ids` name a row (tombstone or live), through `items_by_id`, in a few statements.
    static func existing(ids: [Data], in db: Connection) throws -> Set<Data> {
        var found: Set<Data> = []
        for chunk in KeychainSync.chunks(of: ids) {
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            try db.forEachRow("SELECT id FROM items WHERE id IN (\(placeholders))", chunk.map { .blob($0) }) { row in
                if let id = row.blob(0) { found.insert(id) }
            }
        }
        return found
    }

    /// Whether the file holds any tombstone (a batch checks once, not per item).
    static func hasTombstones(in db: Connection) throws -> Bool {
        try db.integer("SELECT EXISTS (SELECT 1 FROM items WHERE tomb = 1)") == 1
    }

    /// Rows in the file, tombstones included.
    static func count(in db: Connection) throws -> Int { Int(try db.integer("SELECT count(*) FROM items") ?? 0) }
}

/// The `item_index` table: (keyed digest, row number) pairs, so any attribute is found through an index.
enum IndexTable {
    /// Adds index entries, in the order given, 256 to a statement.
    static func insert(_ entries: [(digest: Data, rowID: Int64)], in db: Connection) throws {
        var start = 0
        while start < entries.count {
            let chunk = entries[start..<min(entries.count, start + 256)]
            let placeholders = Array(repeating: "(?, ?)", count: chunk.count).joined(separator: ", ")
            var arguments: [SQLValue] = []
            arguments.reserveCapacity(chunk.count * 2)
            // Appended one by one: `+= [a, b]` allocates an array per entry.
            for entry in chunk {
                arguments.append(.blob(entry.digest))
                arguments.append(.integer(entry.rowID))
            }
            try db.run("INSERT OR IGNORE INTO item_index (digest, item) VALUES \(placeholders)", arguments)
            start += chunk.count
        }
    }

    /// Adds a row's index entries.
    static func insert(_ row: ItemRow, rowID: Int64, in db: Connection) throws {
        try insert(row.indexDigests.map { ($0, rowID) }, in: db)
    }

    /// Removes a row's index entries (those its `idx` column lists).
    static func remove(_ row: ItemRow, in db: Connection) throws {
        guard let rowID = row.rowID else { return }
        for digest in row.indexDigests {
            try db.run("DELETE FROM item_index WHERE digest = ? AND item = ?", [.blob(digest), .integer(rowID)])
        }
    }
}

/// The `meta` table: named values (the keychain id, the key records, settings, registrations).
enum MetaTable {
    /// The names of `meta`'s rows.
    enum Name: String, CaseIterable {
        case keychainID = "keychain-id"
        case kdf = "kdf"
        case keyCheck = "key-check"
        case keybag = "keybag"
        case deviceKeybag = "device-keybag"
        case autoLockSeconds = "setting.auto-lock-seconds"
        case lockOnSleep = "setting.lock-on-sleep"
        case registrations = "registrations"
        /// The TPM enrollment (`TPMEnrollment`): present when the keybag also needs the TPM.
        case tpmEnrollment = "tpm-enrollment"
        /// The keybag sealed under the recovery code's key (with a TPM enrollment only).
        case recoveryKeybag = "recovery-keybag"
        /// The ThisDeviceOnly class keys sealed under the device key (with a TPM enrollment only), which a
        /// recovery on this machine brings back and a recovery elsewhere cannot.
        case deviceOnlyKeybag = "device-only-keybag"
        /// The keybag under the unattended key the TPM seals to PCR values (with `--unattended` only).
        case unattendedKeybag = "unattended-keybag"
    }

    static func value(_ name: Name, in db: Connection) throws -> Data? {
        try db.blob("SELECT value FROM meta WHERE name = ?", [.text(name.rawValue)])
    }

    static func set(_ name: Name, _ value: Data, in db: Connection) throws {
        try db.run("INSERT OR REPLACE INTO meta (name, value) VALUES (?, ?)", [.text(name.rawValue), .blob(value)])
    }

    static func remove(_ name: Name, in db: Connection) throws {
        try db.run("DELETE FROM meta WHERE name = ?", [.text(name.rawValue)])
    }

    /// Every row whose name this code knows.
    static func all(in db: Connection) throws -> [Name: Data] {
        var rows: [Name: Data] = [:]
        try db.forEachRow("SELECT name, value FROM meta") { row in
            if let name = row.text(0).flatMap(Name.init(rawValue:)), let value = row.blob(1) { rows[name] = value }
        }
        return rows
    }
}
