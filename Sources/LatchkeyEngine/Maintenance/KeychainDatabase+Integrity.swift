package import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyStorage

/// What `verifyIntegrity()` found.
package struct IntegrityReport: Hashable, Sendable, CustomStringConvertible {
    /// One item that failed verification.
    package struct DamagedItem: Hashable, Sendable {
        /// The item's persistent reference (delete it with `kSecValuePersistentRef`).
        package let persistentReference: Data
        /// The item class.
        package let itemClass: ItemClass
        /// What failed (never a value).
        package let reason: String
    }

    /// Rows in the file, tombstones included.
    package let rows: Int
    /// Items whose key, attributes, data, digests and index entries all verified.
    package let verified: Int
    /// Tombstones (deleted synchronizable items).
    package let tombstones: Int
    /// Items that could not be checked because their class key is unavailable (locked).
    package let unavailable: Int
    /// Items that failed verification.
    package let damaged: [DamagedItem]
    /// SQLite's own structural check (`PRAGMA integrity_check`, which also compares every index with its
    /// table): "ok" or its first complaint.
    package let structure: String

    /// Whether nothing is damaged and SQLite's structure check passed.
    package var isHealthy: Bool { damaged.isEmpty && structure == "ok" }

    package var description: String {
        "\(rows) rows: \(verified) verified, \(damaged.count) damaged, \(unavailable) unavailable (locked), "
            + "\(tombstones) tombstones; structure: \(structure)"
    }
}

extension KeychainDatabase {
    /// Checks every item: unwraps its key, authenticates its attributes and data, and recomputes its
    /// digests and index entries. Damage is reported per item; nothing is changed. `progress` hears of
    /// the rows checked.
    package func verifyIntegrity(progress: ProgressHandler? = nil) throws(KeychainError) -> IntegrityReport {
        let keys = vault.snapshot()
        let indexKey = try indexKey(keys)
        return try mappingStorageErrors {
            try pool.read { db in
                var structure = "ok"
                try db.forEachRow("PRAGMA integrity_check(1)") { row in structure = row.text(0) ?? "unknown" }
                var rows = 0
                var verified = 0
                var tombstones = 0
                var unavailable = 0
                var damaged: [IntegrityReport.DamagedItem] = []
                let sql = "SELECT \(ItemTable.selectColumns), data, class FROM items"
                var pending: [ItemRow] = []
                try db.forEachRow(sql) { statement in
                    rows += 1
                    let itemClass = ItemClass(rawValue: statement.text(ItemTable.classColumn) ?? "") ?? .genericPassword
                    var row = ItemTable.decode(statement, itemClass: itemClass, includeData: true)
                    if ItemClass(rawValue: statement.text(ItemTable.classColumn) ?? "") == nil
                        || ItemSchema.of(itemClass) == nil
                    {
                        row.malformed = true
                    }
                    pending.append(row)
                }
                let checking = ProgressReporter(progress, .checking, total: pending.count)
                for (index, row) in pending.enumerated() {
                    defer { checking.report(index + 1) }
                    let reference = PersistentReference.make(
                        itemClass: row.itemClass, rowID: row.rowID ?? 0, id: row.id)
                    if keys.classKey(for: row.accessibility) == nil && !row.malformed {
                        unavailable += 1
                        continue
                    }
                    do {
                        let opened = try ItemSelection.open(row, keys: keys, attributes: true)
                        let attributes = opened.attributes ?? [:]
                        if row.tombstone {
                            guard !row.hasData else { throw KeychainError.decode("a tombstone still holds data") }
                            tombstones += 1
                            continue
                        }
                        _ = try ItemSealing.openData(row, itemKey: opened.itemKey)
                        // Recompute every digest: a mismatch means the row was written with another index key
                        // or by faulty code, even though its seals are intact.
                        let schema = ItemSchema.of(row.itemClass)!
                        guard case .string(let group)? = attributes[.accessGroup],
                            ItemDigests.group(group, key: indexKey) == row.groupDigest,
                            ItemDigests.primaryKey(schema: schema, attributes: attributes, key: indexKey)
                                == row.primaryKeyDigest,
                            ItemDigests.indexEntries(itemClass: row.itemClass, attributes: attributes, key: indexKey)
                                == row.indexDigests
                        else { throw KeychainError.decode("the item's digests do not match its attributes") }
                        for digest in row.indexDigests {
                            guard
                                try db.integer(
                                    "SELECT 1 FROM item_index WHERE digest = ? AND item = ?",
                                    [.blob(digest), .integer(row.rowID!)]
                                ) != nil
                            else { throw KeychainError.decode("an index entry of the item is missing") }
                        }
                        verified += 1
                    } catch let error as KeychainError where error.status == .decode {
                        damaged.append(
                            .init(
                                persistentReference: reference, itemClass: row.itemClass,
                                reason: error.detail ?? error.message))
                    }
                }
                return IntegrityReport(
                    rows: rows, verified: verified, tombstones: tombstones, unavailable: unavailable, damaged: damaged,
                    structure: structure)
            }
        }
    }

    /// Index entries that name no live item (for the tests of code that defers index writes).
    package func orphanIndexEntries() throws(KeychainError) -> Int {
        try mappingStorageErrors {
            try pool.read { db in
                Int(
                    try db.integer(
                        "SELECT count(*) FROM item_index WHERE item NOT IN (SELECT row_id FROM items WHERE tomb = 0)")
                        ?? 0)
            }
        }
    }

    /// How many rows the file holds (tombstones included); for tests and benchmarks.
    package func rowCount() throws(KeychainError) -> Int {
        try mappingStorageErrors { try pool.read { db in try ItemTable.count(in: db) } }
    }
}
