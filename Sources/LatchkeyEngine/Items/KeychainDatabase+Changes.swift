import FoundationEssentials
internal import LatchkeyPOSIX
internal import LatchkeyStorage

extension KeychainDatabase {
    /// The file format this Latchkey writes (and the newest it reads); older files are migrated when opened.
    public static var formatVersion: Int { KeychainSchema.currentVersion }

    /// The change feed: every change to an item after `sequence` (0 for the start of the feed), oldest first,
    /// at most `limit` — in commit order, whichever process made them. Each mutation is recorded in the
    /// transaction that makes it, so the feed never shows a change that did not happen nor misses one that
    /// did, even after a crash. Follow it by passing the last `sequence` seen:
    ///
    /// ```swift
    /// var seen: Int64 = 0
    /// for change in try keychain.changes(after: seen) { seen = change.sequence; … }
    /// ```
    ///
    /// The feed starts when the file got format v2 (a keychain made earlier starts with its migration); it
    /// needs no key, as it holds no attribute value.
    public func changes(after sequence: Int64, limit: Int = 1_000) throws(KeychainError) -> [KeychainChange] {
        guard limit > 0 else { throw KeychainError.param("the limit must be positive, not \(limit)") }
        return try mappingStorageErrors {
            try pool.read { db in try ChangeLog.changes(after: sequence, limit: limit, in: db) }
        }
    }

    /// The sequence of the newest change (0 before the first).
    public var lastChangeSequence: Int64 {
        get throws(KeychainError) {
            try mappingStorageErrors { try pool.read { db in try ChangeLog.lastSequence(in: db) } }
        }
    }
}

extension KeychainDatabase {
    /// Holds a write transaction open for `seconds`, calling `started` once it is open: for the tests that
    /// show a long write (an import, a sync pull) never stalls readers, in this process or another.
    package func holdWriteTransaction(seconds: Double, started: () -> Void) throws(KeychainError) {
        try mappingStorageErrors {
            try pool.write { _ in
                started()
                CurrentThread.sleep(for: .seconds(seconds))
            }
        }
    }
}
