package import FoundationEssentials
internal import LatchkeyStorage

/// A pulled row made ready to write, away from the write lock (`KeychainSync.prepare`): the row, the record
/// the sync layer opened from it (or why it did not open), and — for a record that adds or changes an item —
/// that item validated through the engine's schema and sealed under this keychain's keys.
package struct SyncPreparedRow: Sendable {
    /// The row as the server sent it.
    package let envelope: SyncEnvelope
    /// The record the sync layer opened and verified, or its reason for refusing the row.
    package let opened: Result<SyncRecord, KeychainError>
    /// The record's item sealed as a row (no row number yet), or why it is not a valid item
    /// (`errSecInteractionNotAllowed`: its class key is unavailable); nil for deletions and rows not sealed.
    let sealed: Result<ItemRow, KeychainError>?
}

/// What writing one row did: the action the sync layer chose for it and, for an applied record, the outcome.
package struct SyncWrittenRow: Sendable {
    /// What the sync layer decided (in the transaction, from the version this device knew then).
    package let action: SyncInboxAction
    /// What applying it did (nil when it was not applied: dropped, acknowledged, refused, or not a valid item).
    package let outcome: SyncApplyOutcome?
}

extension KeychainSync {
    /// Validates and seals the opened records of a page on every core, without touching the database
    /// (so it can run while another page is written): `opened[i]` is what the sync layer opened from
    /// `envelopes[i]`. Rows by `author` — this device's own pushes coming back, which are acknowledged or
    /// dropped, never applied — and deletions are not sealed. Each row is copied once, into its place in the
    /// result (a copy retains a dozen buffers).
    package func prepare(
        _ envelopes: [SyncEnvelope], opened: [Result<SyncRecord, KeychainError>], except author: Data
    )
        -> [SyncPreparedRow]
    {
        precondition(envelopes.count == opened.count, "one opened record per row")
        let keys = database.vault.snapshot()
        // A page's items share a few access groups: each group's digest is computed once, not per item.
        var digests: [String: Data] = [:]
        if let indexKey = keys.indexKey {
            for case .success(let record) in opened {
                guard let group = record.attributes[.accessGroup]?.stringValue, digests[group] == nil else { continue }
                digests[group] = ItemDigests.group(group, key: indexKey)
            }
        }
        let groupDigests = digests
        // The transform never throws: a row that does not make an item carries its error.
        do throws(KeychainError) {
            return try ParallelMap.map(Array(envelopes.indices)) { (index) throws(KeychainError) -> SyncPreparedRow in
                var sealed: Result<ItemRow, KeychainError>?
                if envelopes[index].author != author, case .success(let record) = opened[index], !record.deleted {
                    do throws(KeychainError) {
                        sealed = .success(
                            try prepareSynced(record, keys: keys, groupDigests: groupDigests).sealed(
                                id: record.itemID, version: record.version, rowID: nil))
                    } catch {
                        sealed = .failure(error)
                    }
                }
                return SyncPreparedRow(envelope: envelopes[index], opened: opened[index], sealed: sealed)
            }
        } catch {
            return envelopes.indices.map {
                SyncPreparedRow(envelope: envelopes[$0], opened: opened[$0], sealed: .failure(error))
            }
        }
    }

    /// Writes a page in one transaction, in the server's order. For each row `decide` — given its envelope,
    /// the record opened from it, and the version of its item the server holds as far as this device knows
    /// at that point of the page — says what to do:
    /// drop it (`discard`: a version this device has), record it as this device's own push
    /// (`acknowledge`), refuse it with its reason (`reject`, recorded with no content), or apply it.
    ///
    /// With `cursor`, the rows are fresh from the server: the cursor moves with them (a crash keeps the page
    /// and its cursor, or neither), and a row that cannot be written yet (its class key is unavailable) is
    /// kept in the inbox. Without, they come from the inbox: the rows written, dropped or refused leave it
    /// (an applied version takes the item's older rows with it), the others stay.
    ///
    /// Applying: a local change not pushed yet loses to the server's version (the server took the other
    /// first: the same winner on every device) and is kept as a conflict record sealed by `sealer`. A new
    /// item whose primary key a live local item with another id holds: the lower id wins on every device;
    /// the loser is kept as a conflict record (and, when it is the local item and the server has it,
    /// becomes a tombstone that is pushed). A deletion removes the local item.
    package func write(
        _ rows: [SyncPreparedRow], cursor: Int64?, sealer: SyncConflictSealer,
        decide: (
            SyncEnvelope, _ opened: Result<SyncRecord, KeychainError>, _ known: (version: Int64, deleted: Bool)?
        ) -> SyncInboxAction
    ) throws(KeychainError) -> [SyncWrittenRow] {
        let keys = database.vault.snapshot()
        return try mappingStorageErrors {
            try database.pool.bulkWrite { db in
                var written: [SyncWrittenRow] = []
                written.reserveCapacity(rows.count)
                // Older rows of an item wait in the inbox only when the keychain was locked: looked at once.
                let inboxHolds = try cursor == nil || db.integer("SELECT EXISTS (SELECT 1 FROM sync_inbox)") == 1
                // New items' index entries are inserted at the end, sorted (each index walked once, as a batch
                // add does) — for items that appear once in the page; a second version of one is indexed at once.
                let singles = Self.appearingOnce(rows.map(\.envelope.itemID))
                var entries: [(key: UInt64, digest: Data, rowID: Int64)] = []
                var removedRows: Set<Int64> = []
                // For items that appear once in the page, what the file holds of them is read for the whole page
                // at once: only rows of an item change what is known of it or add a row with its id (a row that
                // went since — another item's clash — is found gone by the general path). New items'
                // bookkeeping (their change-feed entry, their known version, any dirty mark of their id cleared)
                // is written at the end, or before any other kind of row.
                let once = rows.indices.compactMap { singles[$0] ? rows[$0].envelope.itemID : nil }
                let knownOnce = try Self.known(once, in: db)
                let presentOnce = try ItemTable.existing(ids: once, in: db)
                var deferred = DeferredBookkeeping(
                    marksBefore: try db.integer("SELECT EXISTS (SELECT 1 FROM sync_dirty)") == 1)
                // By index through the buffer, not `for row in rows` or `rows[index]`: either copies the row (a
                // dozen buffers to retain and release, more than a new item's bookkeeping costs); the buffer's
                // elements are borrowed where they are.
                try rows.withUnsafeBufferPointer { rows in
                    for index in rows.indices {
                        let envelope = rows[index].envelope
                        let single = singles[index]
                        let known = try single ? knownOnce[envelope.itemID] : Self.known(envelope.itemID, in: db)
                        // Not the whole row: passed to a closure, it was copied (its sealed item too).
                        let action = decide(envelope, rows[index].opened, known)
                        if single, !inboxHolds, !presentOnce.contains(envelope.itemID),
                            case .apply(let record) = action,
                            !record.deleted, case .success(let item)? = rows[index].sealed
                        {
                            // A new item, the common case: its insert alone, unless another item holds its primary key.
                            do {
                                try Self.addSynced(
                                    item, index: { entries.append((ItemDigests.orderKey($0), $0, $1)) }, in: db,
                                    deferred: deferred.writes)
                                deferred.add(record.itemID, version: record.version)
                                written.append(SyncWrittenRow(action: action, outcome: .applied))
                                continue
                            } catch KeychainError.duplicateItem {
                                // The general path below sorts it out.
                            }
                        }
                        try deferred.flush(in: db)
                        var outcome: SyncApplyOutcome?
                        var reason: String?
                        switch action {
                        case .discard:
                            break
                        case .acknowledge:
                            try Self.setKnown(
                                envelope.itemID, version: envelope.version, deleted: envelope.deleted, in: db)
                        case .reject(let why):
                            reason = why
                        case .apply(let record):
                            var sealed = rows[index].sealed
                            if sealed == nil, !record.deleted {
                                // Not sealed ahead (a row `prepare` skipped): sealed now.
                                do throws(KeychainError) {
                                    sealed = .success(
                                        try prepareSynced(record, keys: keys).sealed(
                                            id: record.itemID, version: record.version, rowID: nil))
                                } catch {
                                    sealed = .failure(error)
                                }
                            }
                            switch sealed {
                            case .failure(let error) where error.status == .interactionNotAllowed:
                                outcome = .locked
                            case .failure(let error):
                                reason = "its content is not a valid item: \(error.detail ?? error.message)"
                            case .success(let item):
                                outcome = try apply(
                                    record, sealed: item, known: known, keys: keys, sealer: sealer, in: db,
                                    index: single ? { entries.append((ItemDigests.orderKey($0), $0, $1)) } : nil,
                                    removed: { removedRows.insert($0) })
                            case nil:
                                outcome = try apply(
                                    record, sealed: nil, known: known, keys: keys, sealer: sealer, in: db)
                            }
                        }
                        if let reason {
                            try db.run(
                                "INSERT INTO sync_rejected (seq, item, version, reason, recorded) VALUES (?, ?, ?, ?, ?)",
                                [
                                    .integer(envelope.sequence), .blob(envelope.itemID), .integer(envelope.version),
                                    .text(reason), .integer(Int64(Date().timeIntervalSince1970)),
                                ])
                        }
                        if outcome == .applied || outcome == .appliedOverConflict {
                            // Written as the server has it: nothing of this item is left to push.
                            try db.run("DELETE FROM sync_dirty WHERE item = ?", [.blob(envelope.itemID)])
                        }
                        if outcome == .locked {
                            if cursor != nil { try Self.keepInInbox(envelope, in: db) }
                        } else if case .apply(let record) = action, inboxHolds {
                            // Its own row too, when it came from the inbox (the same item and version: the record opened
                            // from it says so), in one statement.
                            try db.run(
                                "DELETE FROM sync_inbox WHERE item = ? AND version <= ?",
                                [.blob(record.itemID), .integer(record.version)])
                        } else if cursor == nil {
                            try db.run("DELETE FROM sync_inbox WHERE seq = ?", [.integer(envelope.sequence)])
                        }
                        written.append(SyncWrittenRow(action: action, outcome: outcome))
                    }
                }
                try deferred.flush(in: db)
                // A row added in this page and then removed by a later item of it (a lower id with its primary key)
                // keeps no entries.
                entries.removeAll { removedRows.contains($0.rowID) }
                entries.sort { $0.key < $1.key }
                try IndexTable.insert(entries.map { ($0.digest, $0.rowID) }, in: db)
                if let cursor {
                    try db.run(
                        "INSERT OR REPLACE INTO sync_state (name, value) VALUES ('cursor', ?)",
                        [.blob(Self.encode(cursor))])
                }
                return written
            }
        }
    }

    /// For each of `ids`, whether no other of them is the same: found by sorting their positions by a 64-bit
    /// prefix of the id (then the whole id), so equal ids end up side by side — hashing each 16-byte `Data`
    /// into a dictionary cost several times more.
    static func appearingOnce(_ ids: [Data]) -> [Bool] {
        let keys = ids.map(ItemDigests.orderKey)
        let order = ids.indices.sorted {
            keys[$0] != keys[$1] ? keys[$0] < keys[$1] : ByteOrder.precedes(ids[$0], ids[$1])
        }
        var once = [Bool](repeating: true, count: ids.count)
        for (a, b) in zip(order, order.dropFirst()) where keys[a] == keys[b] && ids[a] == ids[b] {
            once[a] = false
            once[b] = false
        }
        return once
    }

    /// The known versions of many items, read in a few statements (for a page's items).
    static func known(_ itemIDs: [Data], in db: Connection) throws -> [Data: (version: Int64, deleted: Bool)] {
        var known: [Data: (version: Int64, deleted: Bool)] = [:]
        for chunk in chunks(of: itemIDs) {
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            try db.forEachRow(
                "SELECT item, version, deleted FROM sync_items WHERE item IN (\(placeholders))", chunk.map { .blob($0) }
            ) { row in
                if let id = row.blob(0) { known[id] = (row.integer(1), row.integer(2) != 0) }
            }
        }
        return known
    }

    /// `ids` cut into pieces of at most 256 for one statement each, every piece padded to a power of two by
    /// repeating its last id (harmless in an `IN` list and in a replace of the same values), so that few
    /// statement texts are prepared and cached.
    static func chunks(of ids: [Data]) -> [[Data]] {
        stride(from: 0, to: ids.count, by: 256).map { start in
            var chunk = Array(ids[start..<min(ids.count, start + 256)])
            let size = 1 << (Int.bitWidth - (chunk.count - 1).leadingZeroBitCount)
            if let last = chunk.last, chunk.count > 1 { chunk += repeatElement(last, count: size - chunk.count) }
            return chunk
        }
    }

    /// What a page's new items leave to its end: their change-feed entries, their known versions (which later
    /// rows of the page read here first) and any dirty mark left of their ids, to clear — written in a few
    /// statements, and before any other kind of row, so the order of the page's writes (and of its changes
    /// in the feed) holds.
    struct DeferredBookkeeping {
        /// The new items' change-feed entries.
        let writes = DeferredItemWrites()
        /// Whether `sync_dirty` held any mark when the page started. A new item's id appears once in the page
        /// and has no row, so only a mark from before the page (left by a deletion) can name it: with none,
        /// there is nothing to clear.
        let marksBefore: Bool
        private var items: [(key: UInt64, id: Data, version: Int64)] = []

        init(marksBefore: Bool) { self.marksBefore = marksBefore }

        /// A new item written as the server has it (version `version`): nothing of it is left to push. Each
        /// item once (the fast path takes only items that appear once in the page).
        mutating func add(_ itemID: Data, version: Int64) {
            items.append((ItemDigests.orderKey(itemID), itemID, version))
        }

        /// Writes what is deferred: the known versions in id order (the table's key: one walk of it).
        mutating func flush(in db: Connection) throws {
            try writes.flush(in: db)
            guard !items.isEmpty else { return }
            items.sort { $0.key < $1.key }
            var start = 0
            while start < items.count {
                // As `chunks(of:)` cuts them: at most 256, padded to a power of two with the last item again.
                let real = min(256, items.count - start)
                let size = real == 1 ? 1 : 1 << (Int.bitWidth - (real - 1).leadingZeroBitCount)
                var arguments: [SQLValue] = []
                arguments.reserveCapacity(size * 2)
                var ids: [SQLValue] = []
                ids.reserveCapacity(size)
                for offset in 0..<size {
                    let item = items[start + min(offset, real - 1)]
                    arguments.append(.blob(item.id))
                    arguments.append(.integer(item.version))
                    ids.append(.blob(item.id))
                }
                let placeholders = Array(repeating: "(?, ?, 0)", count: size).joined(separator: ", ")
                try db.run(
                    "INSERT OR REPLACE INTO sync_items (item, version, deleted) VALUES \(placeholders)", arguments)
                if marksBefore {
                    let list = Array(repeating: "?", count: size).joined(separator: ", ")
                    try db.run("DELETE FROM sync_dirty WHERE item IN (\(list))", ids)
                }
                start += real
            }
            items.removeAll(keepingCapacity: true)
        }
    }

    /// Stores a pulled row in the inbox, still sealed under the vault key, until it can be written.
    static func keepInInbox(_ envelope: SyncEnvelope, in db: Connection) throws {
        try db.run(
            """
            INSERT OR REPLACE INTO sync_inbox (seq, item, version, deleted, key_id, ciphertext, author)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .integer(envelope.sequence), .blob(envelope.itemID), .integer(envelope.version),
                .integer(envelope.deleted ? 1 : 0), .integer(Int64(envelope.keyID)), .blob(envelope.ciphertext),
                .blob(envelope.author),
            ])
    }
}
