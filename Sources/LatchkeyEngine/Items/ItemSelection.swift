import Foundation
internal import LatchkeyCrypto
internal import LatchkeyStorage

/// Finds the rows a query may match through the indexes (never by decrypting the table), and opens them.
///
/// The SQL narrows by class, tombstone, sync flag, access-group digests, accessibility, id, and either the
/// primary-key digest (when the query names the whole primary key) or one index digest per attribute.
/// Each candidate's item key is then unwrapped; its associated data covers every plaintext column of the
/// row (group, primary-key and index digests included), so a row that opens is exactly as it was sealed,
/// and a filter is proven by its digest being among the row's sealed digests. A damaged index can hide an
/// item but can never make a query return an item that does not match. Attributes are decrypted only when
/// they are returned, or a filter cannot be proven by digests (`cdat`, `mdat`).
struct ItemSelection {
    let query: ValidatedQuery
    let keys: KeyVault.Snapshot
    let indexKey: SecureBytes
    /// Digests of the groups the query may see (nil: every group).
    let groupDigests: [Data]?
    /// The primary-key digest when the query names the whole primary key.
    let primaryKeyDigest: Data?
    /// Index digests of the filters not already proven by the primary-key digest.
    let filterDigests: [Data]
    /// Filters no digest can prove (the engine sets `cdat` and `mdat` itself and does not index them).
    let unindexedFilters: [AttributeKey]

    init(query: ValidatedQuery, keys: KeyVault.Snapshot, indexKey: SecureBytes) {
        self.query = query
        self.keys = keys
        self.indexKey = indexKey
        if case .only(let groups) = query.groups {
            groupDigests = Array(Set(groups.map { ItemDigests.group($0, key: indexKey) }))
        } else {
            groupDigests = nil
        }
        let itemClass = query.schema.itemClass
        primaryKeyDigest = query.namesWholePrimaryKey
            ? ItemDigests.primaryKey(schema: query.schema, attributes: query.filters, key: indexKey) : nil
        let provenByPrimaryKey = Set(primaryKeyDigest == nil ? [] : query.schema.primaryKey)
        filterDigests = query.filters.sorted { $0.key < $1.key }
            .filter { !ItemDigests.unindexed.contains($0.key) && !provenByPrimaryKey.contains($0.key) }
            .map { ItemDigests.index(itemClass: itemClass, attribute: $0.key, value: $0.value, key: indexKey) }
        unindexedFilters = query.filters.keys.filter { ItemDigests.unindexed.contains($0) }
    }

    func candidates(_ db: Connection, includeData: Bool) throws -> [ItemRow] {
        let (sql, arguments) = statement(includeData: includeData)
        var rows: [ItemRow] = []
        try db.forEachRow(sql, arguments) { row in
            rows.append(ItemTable.decode(row, itemClass: query.schema.itemClass, includeData: includeData))
        }
        return rows
    }

    /// The SELECT that finds the candidates, and its arguments.
    func statement(includeData: Bool) -> (sql: String, arguments: [SQLValue]) {
        var sql = "SELECT \(ItemTable.selectColumns)\(includeData ? ", data" : "") FROM items WHERE class = ? AND tomb = 0"
        var arguments: [SQLValue] = [.text(query.schema.itemClass.rawValue)]
        switch query.synchronizable {
        case .no: sql += " AND sync = 0"
        case .yes: sql += " AND sync = 1"
        case .any: break
        }
        if let groupDigests {
            sql += " AND agrp IN (" + Array(repeating: "?", count: groupDigests.count).joined(separator: ", ") + ")"
            arguments += groupDigests.map { .blob($0) }
        }
        if let accessibility = query.accessibility {
            sql += " AND pdmn = ?"
            arguments.append(.text(accessibility.rawValue))
        }
        if let reference = query.reference {
            sql += " AND row_id = ? AND id = ?"
            arguments += [.integer(reference.rowID), .blob(reference.id)]
        }
        if let primaryKeyDigest {
            sql += " AND pk = ?"
            arguments.append(.blob(primaryKeyDigest))
        }
        for digest in filterDigests {
            sql += " AND row_id IN (SELECT item FROM item_index WHERE digest = ?)"
            arguments.append(.blob(digest))
        }
        sql += " ORDER BY row_id"
        return (sql, arguments)
    }

    /// An opened candidate: its row, its item key, and its attributes when they were decrypted.
    struct Opened {
        var row: ItemRow
        let itemKey: SecureBytes
        let attributes: [AttributeKey: AttributeValue]?
    }

    /// Opens a candidate and checks it against the query. Returns nil when it does not match. Throws
    /// `errSecInteractionNotAllowed` when its class key is not available and `errSecDecode` when it is
    /// damaged. `attributes` forces the attributes to be decrypted.
    func open(_ row: ItemRow, attributes wanted: Bool) throws(KeychainError) -> Opened? {
        // The digests the SQL matched must be among those the row was sealed with (the item_index table
        // itself is not sealed). The pk, group and id columns are proven by the key's associated data.
        for digest in filterDigests where !row.indexDigests.contains(digest) { return nil }
        let needsAttributes = wanted || !unindexedFilters.isEmpty
        let opened = try Self.open(row, keys: keys, attributes: needsAttributes)
        if let attributes = opened.attributes {
            for name in unindexedFilters {
                guard let stored = attributes[name], CanonicalValue.matches(stored, query.filters[name]!) else { return nil }
            }
        }
        return opened
    }

    /// Unwraps the row's item key — proving every plaintext column — and decrypts its attributes when asked.
    static func open(_ row: ItemRow, keys: KeyVault.Snapshot, attributes wanted: Bool) throws(KeychainError) -> Opened {
        guard !row.malformed else { throw KeychainError.decode("an item's row is malformed") }
        guard let classKey = keys.classKey(for: row.accessibility) else {
            throw KeychainError.locked(
                "items of accessibility \(row.accessibility.rawValue) are unavailable while the keychain is \(keys.lockState)")
        }
        let itemKey = try ItemSealing.unwrapKey(row, classKey: classKey)
        guard wanted else { return Opened(row: row, itemKey: itemKey, attributes: nil) }
        let attributes = try ItemSealing.openAttributes(row, itemKey: itemKey)
        guard attributes[.accessGroup]?.stringValue != nil,
            attributes[.accessible] == .string(row.accessibility.rawValue),
            attributes[.synchronizable] == .number(row.synchronizable ? 1 : 0)
        else { throw KeychainError.decode("an item's columns do not agree with its encrypted attributes") }
        return Opened(row: row, itemKey: itemKey, attributes: attributes)
    }

    /// The result for an opened item, with what `returning` asks for.
    /// What a search hands out for an opened item. A key held by the keychain gives its public key as its
    /// data unless `releasingHeldKeys` (for `useHeldKey` alone).
    static func result(_ opened: Opened, returning: ReturnOptions, releasingHeldKeys: Bool = false) throws(KeychainError) -> ItemResult {
        let wantsData = returning.contains(.data) || returning.contains(.reference)
        var data = wantsData ? (try ItemSealing.openData(opened.row, itemKey: opened.itemKey) ?? Data()) : nil
        if opened.row.itemClass == .key, !releasingHeldKeys, var stored = data, HeldKeyData.isHeld(stored) {
            data = nil
            defer { stored.resetBytes(in: 0..<stored.count) }
            guard let publicPart = HeldKeyData.publicPart(stored) else { throw KeychainError.decode("a held key's data is damaged") }
            data = publicPart
        }
        return ItemResult(
            itemClass: opened.row.itemClass,
            attributes: returning.contains(.attributes) ? (opened.attributes ?? [:]) : [:],
            data: data,
            persistentReference: PersistentReference.make(
                itemClass: opened.row.itemClass, rowID: opened.row.rowID ?? 0, id: opened.row.id))
    }
}
