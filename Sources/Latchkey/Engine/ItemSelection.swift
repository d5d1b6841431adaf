import Foundation
internal import LatchkeyCrypto
internal import LatchkeyStorage

/// Finds the rows a query may match through the indexes (never by decrypting the table), and opens them.
///
/// The SQL narrows by class, tombstone, sync flag, access-group digests, accessibility, id, and either the
/// primary-key digest (when the query names the whole primary key) or one index digest per attribute.
/// Every candidate is then decrypted and checked against the query, so a damaged index can hide an item
/// but can never make a query return an item that does not match.
struct ItemSelection {
    let query: ValidatedQuery
    let keys: KeyVault.Snapshot
    let indexKey: SecureBytes

    /// The columns every selection reads; `data` only when asked for.
    static let columns = "row_id, id, pdmn, sync, tomb, version, agrp, pk, idx, item_key, attrs, data IS NOT NULL"

    /// Filters that the index cannot answer (the engine sets these on every write).
    var unindexedFilters: [AttributeKey] { query.filters.keys.filter { ItemDigests.unindexed.contains($0) } }

    func candidates(_ db: Connection, includeData: Bool) throws -> [ItemRow] {
        let (sql, arguments) = statement(includeData: includeData)
        var rows: [ItemRow] = []
        try db.forEachRow(sql, arguments) { row in
            rows.append(try Self.decodeRow(row, itemClass: query.schema.itemClass, includeData: includeData))
        }
        return rows
    }

    /// The SELECT that finds the candidates, and its arguments.
    func statement(includeData: Bool) -> (sql: String, arguments: [SQLValue]) {
        var sql = "SELECT \(Self.columns)\(includeData ? ", data" : "") FROM items WHERE class = ? AND tomb = 0"
        var arguments: [SQLValue] = [.text(query.schema.itemClass.rawValue)]
        switch query.synchronizable {
        case .no: sql += " AND sync = 0"
        case .yes: sql += " AND sync = 1"
        case .any: break
        }
        if case .only(let groups) = query.groups {
            let digests = Set(groups.map { ItemDigests.group($0, key: indexKey) })
            sql += " AND agrp IN (" + Array(repeating: "?", count: digests.count).joined(separator: ", ") + ")"
            arguments += digests.map { .blob($0) }
        }
        if let accessibility = query.accessibility {
            sql += " AND pdmn = ?"
            arguments.append(.text(accessibility.rawValue))
        }
        if let id = query.itemID {
            sql += " AND id = ?"
            arguments.append(.blob(id))
        }
        if query.namesWholePrimaryKey {
            sql += " AND pk = ?"
            arguments.append(
                .blob(ItemDigests.primaryKey(schema: query.schema, attributes: query.filters, key: indexKey)))
        } else {
            for (name, value) in query.filters.sorted(by: { $0.key < $1.key })
            where !ItemDigests.unindexed.contains(name) {
                sql += " AND row_id IN (SELECT item FROM item_index WHERE digest = ?)"
                arguments.append(
                    .blob(ItemDigests.index(
                        itemClass: query.schema.itemClass, attribute: name, value: value, key: indexKey)))
            }
        }
        sql += " ORDER BY row_id"
        return (sql, arguments)
    }

    /// Reads the plaintext columns (in the order of `columns`, then `data` when `includeData`); a row whose
    /// columns are not even well-formed is damaged.
    static func decodeRow(_ row: Statement, itemClass: ItemClass, includeData: Bool) throws -> ItemRow {
        guard let id = row.blob(1), let pdmnText = row.text(2), let accessibility = Accessibility(rawValue: pdmnText),
            let groupDigest = row.blob(6), let primaryKey = row.blob(7), let index = row.blob(8),
            let wrappedKey = row.blob(9), let attributes = row.blob(10)
        else {
            return ItemRow(
                rowID: row.integer(0), id: row.blob(1) ?? Data(), itemClass: itemClass, groupDigest: Data(),
                accessibility: .whenUnlocked, synchronizable: false, tombstone: false, version: 0,
                primaryKeyDigest: Data(), indexDigests: [], wrappedKey: Data(), sealedAttributes: Data(),
                sealedData: nil, malformed: true)
        }
        let digestLength = ItemDigests.shortLength
        let indexDigests = stride(from: 0, to: index.count - index.count % digestLength, by: digestLength).map {
            Data(index[(index.startIndex + $0)..<(index.startIndex + $0 + digestLength)])
        }
        return ItemRow(
            rowID: row.integer(0), id: id, itemClass: itemClass, groupDigest: groupDigest,
            accessibility: accessibility, synchronizable: row.integer(3) != 0, tombstone: row.integer(4) != 0,
            version: row.integer(5), primaryKeyDigest: primaryKey, indexDigests: indexDigests,
            wrappedKey: wrappedKey, sealedAttributes: attributes, sealedData: includeData ? row.blob(12) : nil,
            hasData: row.integer(11) != 0)
    }

    /// An opened candidate: its row, its item key and its attributes.
    struct Opened {
        var row: ItemRow
        let itemKey: SecureBytes
        let attributes: [AttributeKey: AttributeValue]
    }

    /// Decrypts a candidate and checks it. Returns nil when it does not match the query. Throws
    /// `errSecInteractionNotAllowed` when its class key is not available and `errSecDecode` when it is
    /// damaged (any ciphertext, plaintext column, or digest that does not agree with the rest).
    func open(_ row: ItemRow) throws(KeychainError) -> Opened? {
        let opened = try Self.open(row, schema: query.schema, keys: keys, indexKey: indexKey)
        for (name, wanted) in query.filters {
            guard let stored = opened.attributes[name], CanonicalValue.matches(stored, wanted) else { return nil }
        }
        return opened
    }

    static func open(_ row: ItemRow, schema: ItemSchema, keys: KeyVault.Snapshot, indexKey: SecureBytes)
        throws(KeychainError) -> Opened
    {
        guard !row.malformed else { throw KeychainError.decode("an item's row is malformed") }
        guard let classKey = keys.classKey(for: row.accessibility) else {
            throw KeychainError.locked(
                "items of accessibility \(row.accessibility.rawValue) are unavailable while the keychain is \(keys.lockState)")
        }
        let itemKey = try ItemSealing.unwrapKey(row, classKey: classKey)
        let attributes = try ItemSealing.openAttributes(row, itemKey: itemKey)
        // The encrypted attributes must agree with every plaintext column derived from them.
        guard case .string(let group)? = attributes[.accessGroup],
            ItemDigests.group(group, key: indexKey) == row.groupDigest,
            attributes[.accessible] == .string(row.accessibility.rawValue),
            attributes[.synchronizable] == .number(row.synchronizable ? 1 : 0),
            ItemDigests.primaryKey(schema: schema, attributes: attributes, key: indexKey) == row.primaryKeyDigest,
            row.indexDigests == (row.tombstone
                ? [] : ItemDigests.indexEntries(itemClass: row.itemClass, attributes: attributes, key: indexKey))
        else { throw KeychainError.decode("an item's columns do not agree with its encrypted attributes") }
        return Opened(row: row, itemKey: itemKey, attributes: attributes)
    }

    /// The result for an opened item, with the secret when asked for.
    static func result(_ opened: Opened, returning: ReturnOptions) throws(KeychainError) -> ItemResult {
        let wantsData = returning.contains(.data) || returning.contains(.reference)
        return ItemResult(
            itemClass: opened.row.itemClass, attributes: opened.attributes,
            data: wantsData ? (try ItemSealing.openData(opened.row, itemKey: opened.itemKey) ?? Data()) : nil,
            persistentReference: PersistentReference.make(itemClass: opened.row.itemClass, id: opened.row.id))
    }
}
