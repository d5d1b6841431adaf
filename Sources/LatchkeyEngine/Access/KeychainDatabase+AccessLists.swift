package import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyStorage

/// Items' access lists (format v6, `item_access`): besides the programs of its access group, an item may
/// name programs that may read it (`TrustedProgram`) — what the agent consults when a program asks for an
/// item outside its groups, and what the user's Always Allow adds to.
///
/// Each entry is a row (item id, program digest, sealed entry). The program digest is keyed with the index
/// key, so the file shows which rows name the same program but not which program; the entry is sealed under
/// a key derived from the `ck` class key, with the item's id and the program digest as associated data — a
/// row moved to another item, or given another program's digest, does not open, and a row only someone who
/// unlocked the keychain can have written. Reading or changing a list needs the first unlock (as the
/// registrations do). A list is this keychain's: sync does not carry it (identities are this machine's; see
/// docs/DESIGN-NOTES.md), a backup does (`KeychainBackup` format 2). Deleting an item — or turning it into a tombstone — drops its
/// list in the same transaction (`ItemStore`).
extension KeychainDatabase {
    /// The access list of the live item `reference` names, oldest entry first. `errSecItemNotFound` when it
    /// names no live item; `errSecInteractionNotAllowed` before the first unlock; `errSecDecode` when an entry
    /// is damaged.
    package func accessList(of reference: Data) throws(KeychainError) -> [AccessListEntry] {
        let keys = try accessListKeys()
        return try mappingStorageErrors {
            try pool.read { db in
                let id = try Self.liveItemID(reference, in: db)
                return try AccessListTable.entries(of: id, sealing: keys.sealing, in: db).map(\.entry)
                    .sorted(by: AccessListEntry.listedBefore)
            }
        }
    }

    /// Adds `program` to the list of the item `reference` names; false when it is there already. An
    /// executable replaces an entry of the same path with another digest (the program was rebuilt: the list
    /// names what runs now). `errSecItemNotFound` when `reference` names no live item.
    @discardableResult
    package func grantAccess(
        to program: TrustedProgram, onItem reference: Data, origin: AccessListEntry.Origin, at date: Date = Date()
    ) throws(KeychainError) -> Bool {
        try program.validate()
        let keys = try accessListKeys()
        let digest = Self.programDigest(program, key: keys.index)
        return try mappingStorageErrors {
            try pool.write { db in
                let id = try Self.liveItemID(reference, in: db)
                let existing = try AccessListTable.entries(of: id, sealing: keys.sealing, in: db)
                if existing.contains(where: { $0.entry.program == program }) { return false }
                if case .executable(let path, _) = program {
                    for old in existing {
                        guard case .executable(let oldPath, _) = old.entry.program, oldPath == path else { continue }
                        try AccessListTable.remove(item: id, program: old.digest, in: db)
                    }
                }
                let entry = AccessListEntry(program: program, added: date, origin: origin)
                try AccessListTable.insert(entry, item: id, digest: digest, sealing: keys.sealing, in: db)
                return true
            }
        }
    }

    /// Removes `program` from the list of the item `reference` names; false when it was not there. An
    /// executable named without its digest (`digest` empty) removes every entry of that path.
    @discardableResult
    package func revokeAccess(of program: TrustedProgram, onItem reference: Data) throws(KeychainError) -> Bool {
        let keys = try accessListKeys()
        return try mappingStorageErrors {
            try pool.write { db in
                let id = try Self.liveItemID(reference, in: db)
                var removed = false
                for row in try AccessListTable.entries(of: id, sealing: keys.sealing, in: db)
                where Self.revocation(of: program, covers: row.entry.program) {
                    try AccessListTable.remove(item: id, program: row.digest, in: db)
                    removed = true
                }
                return removed
            }
        }
    }

    /// Whether revoking `named` removes `entry`: the same program, or — for an executable named by its path
    /// alone (an empty digest) — any digest of that path.
    static func revocation(of named: TrustedProgram, covers entry: TrustedProgram) -> Bool {
        if case .executable(let path, let digest) = named, digest.isEmpty,
            case .executable(let entryPath, _) = entry
        {
            return path == entryPath
        }
        return named == entry
    }

    /// The persistent references of the live items whose lists name `program`, in row order: one index lookup,
    /// then each entry opened (a row whose entry does not open for this program is left out).
    /// `errSecInteractionNotAllowed` before the first unlock.
    package func itemsListing(_ program: TrustedProgram) throws(KeychainError) -> [Data] {
        let keys = try accessListKeys()
        let digest = Self.programDigest(program, key: keys.index)
        return try mappingStorageErrors {
            try pool.read { db in
                var found: [(rowID: Int64, reference: Data)] = []
                try db.forEachRow(
                    """
                    SELECT a.item, a.sealed, i.row_id, i.class FROM item_access a
                    JOIN items i ON i.id = a.item AND i.tomb = 0 WHERE a.program = ?
                    """, [.blob(digest)]
                ) { row in
                    guard let id = row.blob(0), let sealed = row.blob(1),
                        let itemClass = row.text(3).flatMap(ItemClass.init(rawValue:)),
                        let entry = AccessListTable.open(sealed, item: id, digest: digest, sealing: keys.sealing),
                        entry.program == program
                    else { return }
                    let rowID = row.integer(2)
                    found.append((rowID, PersistentReference.make(itemClass: itemClass, rowID: rowID, id: id)))
                }
                return found.sorted { $0.rowID < $1.rowID }.map(\.reference)
            }
        }
    }

    /// Adds `entries` (a backup's) to the list of the item with id `itemID`, in the caller's transaction,
    /// each marked as restored from a backup with its time kept; an entry naming a program the list names
    /// already replaces it.
    func restoreAccessList(_ entries: [AccessListEntry], itemID: Data, in db: Connection) throws {
        let keys = try accessListKeys()
        for entry in entries {
            try entry.program.validate()
            try AccessListTable.insert(
                AccessListEntry(program: entry.program, added: entry.added, origin: .backup), item: itemID,
                digest: Self.programDigest(entry.program, key: keys.index), sealing: keys.sealing, in: db)
        }
    }

    /// Every list of the keychain's live items, by item id (for a backup).
    package func allAccessLists() throws(KeychainError) -> [Data: [AccessListEntry]] {
        let keys = try accessListKeys()
        return try mappingStorageErrors {
            try pool.read { db in
                var lists: [Data: [AccessListEntry]] = [:]
                try db.forEachRow(
                    "SELECT a.item, a.program, a.sealed FROM item_access a JOIN items i ON i.id = a.item AND i.tomb = 0"
                ) { row in
                    guard let id = row.blob(0), let digest = row.blob(1), let sealed = row.blob(2),
                        let entry = AccessListTable.open(sealed, item: id, digest: digest, sealing: keys.sealing)
                    else { throw KeychainError.decode("an entry of an item's access list is damaged") }
                    lists[id, default: []].append(entry)
                }
                return lists
            }
        }
    }

    /// The index key (for program digests) and the lists' sealing key, or `errSecInteractionNotAllowed`
    /// before the first unlock.
    private func accessListKeys() throws(KeychainError) -> (index: SecureBytes, sealing: SecureBytes) {
        let keys = vault.snapshot()
        guard let classKey = keys.classKey(for: .afterFirstUnlock), let index = keys.indexKey else {
            throw KeychainError.locked("items' access lists can be read and changed only after the first unlock")
        }
        return (index, KeyedDigest.subkey(of: classKey, label: "latchkey/v1/access-lists"))
    }

    /// The keyed digest that stands for `program` in `item_access.program`.
    static func programDigest(_ program: TrustedProgram, key: SecureBytes) -> Data {
        var writer = ByteWriter(capacity: 96)
        program.canonical(into: &writer)
        return KeyedDigest.digest(writer.bytes, key: key, length: ItemDigests.shortLength)
    }

    /// The id of the live item `reference` names, or `errSecItemNotFound`.
    static func liveItemID(_ reference: Data, in db: Connection) throws -> Data {
        guard let parsed = PersistentReference.parse(reference) else {
            throw KeychainError.param("not a persistent reference of this keychain's items")
        }
        guard
            try db.integer(
                "SELECT 1 FROM items WHERE row_id = ? AND id = ? AND class = ? AND tomb = 0",
                [.integer(parsed.rowID), .blob(parsed.id), .text(parsed.itemClass.rawValue)]) != nil
        else { throw KeychainError(.itemNotFound, "no item has this persistent reference") }
        return parsed.id
    }
}

/// The `item_access` table's statements and its rows' sealing.
enum AccessListTable {
    /// Every entry of item `id`, opened; `errSecDecode` when one does not open.
    static func entries(of id: Data, sealing: SecureBytes, in db: Connection) throws -> [(
        digest: Data, entry: AccessListEntry
    )] {
        var entries: [(Data, AccessListEntry)] = []
        try db.forEachRow("SELECT program, sealed FROM item_access WHERE item = ?", [.blob(id)]) { row in
            guard let digest = row.blob(0), let sealed = row.blob(1),
                let entry = open(sealed, item: id, digest: digest, sealing: sealing)
            else { throw KeychainError.decode("an entry of the item's access list is damaged") }
            entries.append((digest, entry))
        }
        return entries
    }

    static func insert(
        _ entry: AccessListEntry, item id: Data, digest: Data, sealing: SecureBytes, in db: Connection
    ) throws {
        let sealed = AEAD.seal(entry.encoded(), key: sealing, associatedData: associatedData(item: id, digest: digest))
        try db.run(
            "INSERT OR REPLACE INTO item_access (item, program, sealed) VALUES (?, ?, ?)",
            [.blob(id), .blob(digest), .blob(sealed)])
    }

    static func remove(item id: Data, program digest: Data, in db: Connection) throws {
        try db.run("DELETE FROM item_access WHERE item = ? AND program = ?", [.blob(id), .blob(digest)])
    }

    /// Drops item `id`'s list (the item is deleted or becomes a tombstone).
    static func removeAll(item id: Data, in db: Connection) throws {
        try db.run("DELETE FROM item_access WHERE item = ?", [.blob(id)])
    }

    /// The entry sealed in a row, or nil when it does not open (damaged, moved, another keychain's).
    static func open(_ sealed: Data, item id: Data, digest: Data, sealing: SecureBytes) -> AccessListEntry? {
        guard
            let plaintext = try? AEAD.open(
                sealed, key: sealing, associatedData: associatedData(item: id, digest: digest))
        else { return nil }  // A row that does not open is reported (or left out) by the caller.
        return AccessListEntry.decode(plaintext)
    }

    static func associatedData(item id: Data, digest: Data) -> Data {
        var writer = ByteWriter(capacity: 48)
        writer.appendRaw("lk1/access".utf8)
        writer.appendField(id)
        writer.appendField(digest)
        return writer.data
    }
}
