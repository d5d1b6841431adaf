package import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyStorage

/// The access log (format v6, `access_log`): one row per entry, numbered in order (`seq`, never reused), the
/// entry sealed under a key derived from the `ck` class key with its number as associated data — so the file
/// shows how many entries there are and when they were written, not who read what, and a row moved or
/// renumbered does not open. Each append is its own write transaction, committed before the agent answers the
/// request, so a crash of the agent (kill -9) loses no entry of an answered request. An append that records a
/// change or a deletion is synced as the change was (`synchronous = FULL`); one of reads and refusals only is
/// not waited for (`DatabasePool.writeWithoutSync`): a power cut may lose the newest of those until the next
/// synced commit, and in exchange a read through the agent does not wait for the disk (docs/DESIGN-NOTES.md,
/// "The access log"). The log keeps the newest `limit` entries; the oldest are deleted as new ones
/// come (`secure_delete` overwrites them), and since numbers are never reused, the number of the oldest entry
/// kept says how many were dropped.
extension KeychainDatabase {
    /// How many entries the log keeps by default: about 13 MB of sealed rows at 250 bytes each.
    package static let accessLogLimit = 50_000

    /// Appends `entries`, in order, in one transaction, then drops the oldest beyond `limit`.
    /// `errSecInteractionNotAllowed` before the first unlock (nothing is written).
    package func appendToAccessLog(_ entries: [AccessLogEntry], limit: Int = accessLogLimit) throws(KeychainError) {
        guard !entries.isEmpty else { return }
        let key = try accessLogKey()
        let recordsAChange = entries.contains { $0.allowed && $0.operation.changesItems }
        try mappingStorageErrors {
            let write = { (body: (Connection) throws -> Void) throws in
                try recordsAChange ? self.pool.write(body) : self.pool.writeWithoutSync(body)
            }
            try write { db in
                var last = try db.integer("SELECT seq FROM sqlite_sequence WHERE name = 'access_log'") ?? 0
                for entry in entries {
                    last += 1
                    let sealed = AEAD.seal(entry.encoded(), key: key, associatedData: Self.logAssociatedData(last))
                    try db.run("INSERT INTO access_log (seq, sealed) VALUES (?, ?)", [.integer(last), .blob(sealed)])
                }
                try db.run("DELETE FROM access_log WHERE seq <= ?", [.integer(last - Int64(max(limit, 1)))])
            }
        }
    }

    /// The log's entries, oldest first, that `include` keeps, and how many older ones were dropped.
    /// `errSecInteractionNotAllowed` before the first unlock; `errSecDecode` when an entry does not open.
    package func accessLog(
        since: Date? = nil, where include: (AccessLogEntry) -> Bool = { _ in true }
    ) throws(KeychainError) -> (entries: [AccessLogEntry], dropped: Int64) {
        let key = try accessLogKey()
        return try mappingStorageErrors {
            try pool.read { db in
                var entries: [AccessLogEntry] = []
                var oldest: Int64?
                try db.forEachRow("SELECT seq, sealed FROM access_log ORDER BY seq") { row in
                    let sequence = row.integer(0)
                    if oldest == nil { oldest = sequence }
                    guard let sealed = row.blob(1), let entry = Self.openLogEntry(sealed, sequence: sequence, key: key)
                    else { throw KeychainError.decode("entry \(sequence) of the access log is damaged") }
                    if let since, entry.time < since { return }
                    if include(entry) { entries.append(entry) }
                }
                let last = try db.integer("SELECT seq FROM sqlite_sequence WHERE name = 'access_log'") ?? 0
                return (entries, (oldest ?? last + 1) - 1)
            }
        }
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
