package import FoundationEssentials
internal import LatchkeyCrypto
import LatchkeyPOSIX
internal import LatchkeyStorage

/// The access log (format v6, `access_log`): one row per entry, numbered in order (`seq`, never reused), the
/// entry sealed under a key derived from the `ck` class key with its number as associated data — so the file
/// shows how many entries there are and when they were written, not who read what, and a row moved or
/// renumbered does not open. Every append is written before the agent answers the request, so a crash of the
/// agent (kill -9) loses no entry of an answered request: one that records a change or a deletion in its own
/// transaction, synced as the change was (`synchronous = FULL`); reads and refusals into the journal beside
/// the keychain (`AccessJournal`), one write not waited for on disk, folded into the table every second — a
/// power cut may lose the newest of those, and in exchange a read through the agent costs one write, not a
/// transaction (docs/DESIGN-NOTES.md, "The access log"). The table keeps the newest `limit` entries; the
/// oldest are deleted as new ones come in (`secure_delete` overwrites them), and since numbers are never
/// reused, the number of the oldest entry kept says how many were dropped.
extension KeychainDatabase {
    /// How many entries the log keeps by default: about 13 MB of sealed rows at 250 bytes each.
    package static let accessLogLimit = 50_000

    /// Appends `entries`, in order. Entries that record a change or a deletion go to the database in one
    /// transaction, synced as the change was; reads and refusals go to the journal beside the keychain
    /// (`AccessJournal`: one write, not waited for on disk), folded into the database later. Either way an
    /// entry is numbered and sealed as its row, and the oldest beyond `limit` go when entries reach the
    /// database. `errSecInteractionNotAllowed` before the first unlock (nothing is written).
    package func appendToAccessLog(_ entries: [AccessLogEntry], limit: Int = accessLogLimit) throws(KeychainError) {
        guard !entries.isEmpty else { return }
        let key = try accessLogKey()
        let recordsAChange = entries.contains { $0.allowed && $0.operation.changesItems }
        guard let journal = accessJournal else {
            // In memory: no journal (and nothing to sync); numbered in the transaction.
            try mappingStorageErrors {
                try pool.write { db in
                    let last = try db.integer("SELECT seq FROM sqlite_sequence WHERE name = 'access_log'") ?? 0
                    try Self.insertLogRows(Self.seal(entries, from: last + 1, key: key), limit: limit, in: db)
                }
            }
            return
        }
        let first = try journal.reserve(entries.count) { () throws(KeychainError) -> Int64 in
            try mappingStorageErrors {
                try pool.read { db in try db.integer("SELECT seq FROM sqlite_sequence WHERE name = 'access_log'") ?? 0 }
            }
        }
        let sealed = Self.seal(entries, from: first, key: key)
        if recordsAChange {
            try mappingStorageErrors { try pool.write { db in try Self.insertLogRows(sealed, limit: limit, in: db) } }
        } else {
            try journal.append(sealed.flatMap { AccessJournal.record(sequence: $0.sequence, sealed: $0.sealed) })
        }
    }

    /// Folds the journal into the database (`AccessJournal`): its records inserted in one synced transaction
    /// — a fold a crash cut short first — then the oldest entries beyond `limit` dropped. Needs no key: the
    /// records are sealed already. Nothing to do for an in-memory keychain or an empty journal.
    package func foldAccessJournal(limit: Int = accessLogLimit) throws(KeychainError) {
        guard let journal = accessJournal else { return }
        try journal.folding.withLock { (_) throws(KeychainError) in
            if FileStatus.of(path: journal.foldPath) == nil {
                guard try journal.detachForFolding() else { return }
            }
            let records = try AccessJournal.records(at: journal.foldPath)
            if !records.isEmpty {
                try mappingStorageErrors {
                    try pool.write { db in try Self.insertLogRows(records, limit: limit, in: db) }
                }
            }
            do {
                try Files.remove(journal.foldPath)
            } catch {
                throw KeychainError(.io, "cannot remove the folded access log journal: \(error)")
            }
        }
    }

    /// Entries sealed as rows numbered from `first`.
    private static func seal(_ entries: [AccessLogEntry], from first: Int64, key: SecureBytes) -> [(
        sequence: Int64, sealed: Data
    )] {
        entries.enumerated().map { offset, entry in
            let sequence = first + Int64(offset)
            return (sequence, AEAD.seal(entry.encoded(), key: key, associatedData: logAssociatedData(sequence)))
        }
    }

    /// Inserts numbered rows (one already there is kept: a fold repeated after a crash adds nothing twice),
    /// then drops the oldest beyond `limit`.
    private static func insertLogRows(_ rows: [(sequence: Int64, sealed: Data)], limit: Int, in db: Connection) throws {
        guard let last = rows.map(\.sequence).max() else { return }
        for row in rows {
            try db.run(
                "INSERT OR IGNORE INTO access_log (seq, sealed) VALUES (?, ?)",
                [.integer(row.sequence), .blob(row.sealed)])
        }
        let newest = max(last, try db.integer("SELECT seq FROM sqlite_sequence WHERE name = 'access_log'") ?? 0)
        try db.run("DELETE FROM access_log WHERE seq <= ?", [.integer(newest - Int64(max(limit, 1)))])
    }

    /// The log's entries, oldest first, that `include` keeps, and how many older ones were dropped: the
    /// database's rows with the journal's records not folded yet (read journal first, then the fold, then the
    /// database — the way records move — so none moving meanwhile is missed).
    /// `errSecInteractionNotAllowed` before the first unlock; `errSecDecode` when an entry does not open.
    package func accessLog(
        since: Date? = nil, where include: (AccessLogEntry) -> Bool = { _ in true }
    ) throws(KeychainError) -> (entries: [AccessLogEntry], dropped: Int64) {
        let key = try accessLogKey()
        var sealed: [Int64: Data] = [:]
        if let journal = accessJournal {
            for record in try AccessJournal.records(at: journal.path) + AccessJournal.records(at: journal.foldPath) {
                sealed[record.sequence] = record.sealed
            }
        }
        let last: Int64 = try mappingStorageErrors {
            try pool.read { db in
                try db.forEachRow("SELECT seq, sealed FROM access_log ORDER BY seq") { row in
                    if let blob = row.blob(1) { sealed[row.integer(0)] = blob }
                }
                return try db.integer("SELECT seq FROM sqlite_sequence WHERE name = 'access_log'") ?? 0
            }
        }
        var entries: [AccessLogEntry] = []
        for sequence in sealed.keys.sorted() {
            guard let entry = Self.openLogEntry(sealed[sequence]!, sequence: sequence, key: key) else {
                throw KeychainError.decode("entry \(sequence) of the access log is damaged")
            }
            if let since, entry.time < since { continue }
            if include(entry) { entries.append(entry) }
        }
        let oldest = sealed.keys.min()
        return (entries, (oldest ?? max(last, sealed.keys.max() ?? 0) + 1) - 1)
    }

    private static func openLogEntry(_ sealed: Data, sequence: Int64, key: SecureBytes) -> AccessLogEntry? {
        guard let plaintext = try? AEAD.open(sealed, key: key, associatedData: logAssociatedData(sequence)) else {
            return nil  // Reported by the caller as errSecDecode.
        }
        return AccessLogEntry.decode(plaintext, sequence: sequence)
    }

    private static func logAssociatedData(_ sequence: Int64) -> Data {
        var writer = ByteWriter(capacity: 24)
        writer.appendRaw("lk1/access-log".utf8)
        writer.append(sequence)
        return writer.data
    }

    /// The log's sealing key, or `errSecInteractionNotAllowed` before the first unlock.
    private func accessLogKey() throws(KeychainError) -> SecureBytes {
        guard let classKey = vault.snapshot().classKey(for: .afterFirstUnlock) else {
            throw KeychainError.locked("the access log can be written and read only after the first unlock")
        }
        return KeyedDigest.subkey(of: classKey, label: "latchkey/v1/access-log")
    }
}
