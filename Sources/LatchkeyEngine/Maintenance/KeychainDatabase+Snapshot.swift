package import FoundationEssentials
internal import LatchkeyStorage

extension KeychainDatabase {
    /// Takes a snapshot of the keychain into `directory` (created 0700 when missing) and removes the
    /// oldest ones of this keychain beyond the newest `keep`. The database's pages, the change feed's last
    /// sequence, the item count and the keychain's id are all read in one read transaction, so the snapshot
    /// is the keychain at one commit: writers in this and other processes go on meanwhile and none of
    /// their transactions is half in it. It needs no key (the items stay sealed as they are), so a locked
    /// keychain is snapshotted as well as an unlocked one. `errSecIO` when the directory cannot be made or
    /// written, `errSecDiskFull` when the disk is full.
    package func takeSnapshot(into directory: String, keep: Int, now: Date = Date()) throws(KeychainError)
        -> KeychainSnapshot
    {
        guard keep >= 1 else { throw KeychainError.param("a backup directory keeps at least 1 snapshot, not \(keep)") }
        let (database, sequence, items, keychainID) = try mappingStorageErrors {
            try pool.read { db -> ([UInt8], Int64, Int, Data) in
                let sequence = try ChangeLog.lastSequence(in: db)
                let items = try db.integer("SELECT count(*) FROM items WHERE tomb = 0") ?? 0
                guard let keychainID = try MetaTable.value(.keychainID, in: db), keychainID.count == 16 else {
                    throw KeychainError(.invalidKeychain, "the keychain's id is missing or malformed")
                }
                return (try db.image(), sequence, Int(items), keychainID)
            }
        }
        guard database.count <= KeychainSnapshot.maximumDatabaseBytes else {
            throw KeychainError.param("the keychain is larger than a snapshot can hold (2 GiB)")
        }
        try FileSystem.createPrivateDirectory(directory)
        let file = KeychainSnapshot.encode(
            database: database, taken: now, sequence: sequence, itemCount: items, keychainID: keychainID)
        let written = try SnapshotDirectory.write(file, into: directory, stem: snapshotStem, taken: now)
        try SnapshotDirectory.prune(directory, keychainID: keychainID, keep: keep)
        return try KeychainSnapshot.header(of: written)
    }

    /// A copy of the database's pages in one read transaction (what a snapshot holds; the fuzzer's seeds).
    package func databaseImage() throws(KeychainError) -> [UInt8] {
        try mappingStorageErrors { try pool.read { db in try db.image() } }
    }

    /// The keychain's id (16 random bytes, the same in each of its snapshots).
    package var keychainID: Data {
        get throws(KeychainError) { try readKeyMeta().keychainID }
    }

    /// What snapshot names start with: the keychain file's name up to its first dot.
    var snapshotStem: String {
        let name = (path ?? "memory").split(separator: "/").last.map(String.init) ?? "keychain"
        let stem = name.split(separator: ".").first.map(String.init) ?? ""
        return stem.isEmpty ? "keychain" : stem
    }
}
