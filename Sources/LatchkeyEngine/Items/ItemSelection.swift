import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyStorage
import Synchronization

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

    /// A selection for `query`; `vault` (when given) remembers the caller's group digests across searches.
    init(query: ValidatedQuery, keys: KeyVault.Snapshot, indexKey: SecureBytes, vault: KeyVault? = nil) {
        self.query = query
        self.keys = keys
        self.indexKey = indexKey
        if case .only(let groups) = query.groups {
            var digests: [Data] = []
            digests.reserveCapacity(groups.count)
            var seen = Set<Data>()  // Only for callers of many groups: a linear search is cheaper for a few.
            for group in groups {
                let digest =
                    vault?.groupDigest(group, in: keys, key: indexKey) ?? ItemDigests.group(group, key: indexKey)
                let known = groups.count > 8 ? !seen.insert(digest).inserted : digests.contains(digest)
                if !known { digests.append(digest) }
            }
            groupDigests = digests
        } else {
            groupDigests = nil
        }
        let itemClass = query.schema.itemClass
        let wholePrimaryKey = query.namesWholePrimaryKey
        primaryKeyDigest =
            wholePrimaryKey
            ? ItemDigests.primaryKey(schema: query.schema, attributes: query.filters, key: indexKey) : nil
        var digests: [Data] = []
        var unindexed: [AttributeKey] = []
        // The attribute most likely to name few items first: it drives the search (see `StatementShape`).
        let ordered = query.filters.sorted { first, second in
            let firstBroad = Self.broadAttributes.contains(first.key)
            let secondBroad = Self.broadAttributes.contains(second.key)
            return firstBroad != secondBroad ? secondBroad : first.key < second.key
        }
        for (name, value) in ordered {
            if ItemDigests.unindexed.contains(name) {
                unindexed.append(name)
            } else if !(wholePrimaryKey && query.schema.primaryKey.contains(name)) {
                digests.append(ItemDigests.index(itemClass: itemClass, attribute: name, value: value, key: indexKey))
            }
        }
        filterDigests = digests
        unindexedFilters = unindexed
    }

    /// Attributes many items usually share — a service's accounts, a server's paths and protocols, a key's
    /// type and size, a certificate's encoding, a Secret Service schema: a search with another filter
    /// beside one of these is driven by the other, and only checks these on the rows it finds.
    static let broadAttributes: Set<AttributeKey> = [
        .service, .server, .protocol, .authenticationType, .port, .path, .securityDomain, .creator, .type,
        .itemDescription, .isInvisible, .isNegative, .keyClass, .keySizeInBits, .effectiveKeySize, .isPermanent,
        .tokenID, .keyStorage, .certificateType, .certificateEncoding, .issuer,
        AttributeKey.secretService("xdg:schema"),
        // A key's flags: each true or false for most keys.
        "priv", "modi", "sens", "asen", "extr", "next", "encr", "decr", "drve", "sign", "vrfy", "snrc", "vyrc", "wrap",
        "unwp",
    ]

    func candidates(_ db: Connection, includeData: Bool) throws -> [ItemRow] {
        let (sql, arguments) = statement(includeData: includeData)
        var rows: [ItemRow] = []
        try db.forEachRow(sql, arguments) { row in
            rows.append(ItemTable.decode(row, itemClass: query.schema.itemClass, includeData: includeData))
        }
        // In row order, as items were added: which item a `.one` search returns, and the order of a listing,
        // do not depend on the index SQLite chose. Sorted here rather than by ORDER BY, which costs every
        // lookup a temporary B-tree even when one row comes back; rows usually arrive in order already.
        if rows.indices.dropFirst().contains(where: { (rows[$0 - 1].rowID ?? 0) > (rows[$0].rowID ?? 0) }) {
            rows.sort { ($0.rowID ?? 0) < ($1.rowID ?? 0) }
        }
        return rows
    }

    /// The SELECT that finds the candidates, and its arguments.
    func statement(includeData: Bool) -> (sql: String, arguments: [SQLValue]) {
        let shape = StatementShape(
            includeData: includeData, synchronizable: query.synchronizable, groups: groupDigests?.count,
            accessibility: query.accessibility != nil, reference: query.reference != nil,
            primaryKey: primaryKeyDigest != nil, filters: filterDigests.count)
        var arguments: [SQLValue] = [.text(query.schema.itemClass.rawValue)]
        arguments.reserveCapacity(3 + (groupDigests?.count ?? 0) + filterDigests.count)
        if let groupDigests { arguments += groupDigests.map { .blob($0) } }
        if let accessibility = query.accessibility { arguments.append(.text(accessibility.rawValue)) }
        if let reference = query.reference { arguments += [.integer(reference.rowID), .blob(reference.id)] }
        if let primaryKeyDigest { arguments.append(.blob(primaryKeyDigest)) }
        arguments += filterDigests.map { .blob($0) }
        return (shape.sql, arguments)
    }

    /// What a candidate SELECT's text depends on (never on values, which are bound): searches of one shape
    /// share one text, built once per process instead of once per search.
    struct StatementShape: Hashable {
        let includeData: Bool
        let synchronizable: SynchronizableFilter
        let groups: Int?
        let accessibility: Bool
        let reference: Bool
        let primaryKey: Bool
        let filters: Int

        private static let texts = Mutex<[StatementShape: String]>([:])
        /// Shapes are few (a handful of flags and small counts); past this many, texts are built, not kept.
        private static let limit = 256

        var sql: String {
            if let known = Self.texts.withLock({ $0[self] }) { return known }
            let text = build()
            Self.texts.withLock { texts in
                if texts.count < Self.limit { texts[self] = text }
            }
            return text
        }

        /// Arguments bind in this order: class, groups, accessibility, row and id, primary key, filters.
        private func build() -> String {
            var sql =
                "SELECT \(ItemTable.selectColumns)\(includeData ? ", data" : "") FROM items WHERE class = ? AND tomb = 0"
            switch synchronizable {
            case .no: sql += " AND sync = 0"
            case .yes: sql += " AND sync = 1"
            case .any: break
            }
            if let groups {
                // A whole primary key names at most a few rows through `items_by_primary_key`; `+agrp` (the
                // same test, not an index term) keeps SQLite from weighing `items_by_group` against it. Without
                // `sync = ?` (kSecAttrSynchronizableAny) the two indexes tie on two terms each, and which one
                // SQLite took depended on the order the indexes were created — the wrong one reads every item
                // of the group for one lookup.
                sql +=
                    (primaryKey ? " AND +agrp IN (" : " AND agrp IN (")
                    + Array(repeating: "?", count: groups).joined(separator: ", ") + ")"
            }
            if accessibility { sql += " AND pdmn = ?" }
            if reference { sql += " AND row_id = ? AND id = ?" }
            if primaryKey { sql += " AND pk = ?" }
            // The first index filter (the narrowest, as `ItemSelection` orders them) lists the items having
            // its digest; every other filter is a point lookup of the listed row's entry. Listing each filter
            // would read every item sharing a broad value — every Secret Service item shares its service — to
            // find one. When a reference or a primary key already pins the row, every filter is a point lookup.
            let lists = " AND row_id IN (SELECT item FROM item_index WHERE digest = ?)"
            let checks = " AND EXISTS (SELECT 1 FROM item_index WHERE digest = ? AND item = items.row_id)"
            for index in 0..<filters { sql += index == 0 && !(reference || primaryKey) ? lists : checks }
            return sql
        }
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
        for digest in filterDigests where !row.hasIndexDigest(digest) { return nil }
        let needsAttributes = wanted || !unindexedFilters.isEmpty || query.hostOrSubdomainOf != nil
        let opened = try Self.open(row, keys: keys, attributes: needsAttributes)
        if let attributes = opened.attributes {
            for name in unindexedFilters {
                guard let stored = attributes[name], CanonicalValue.matches(stored, query.filters[name]!) else {
                    return nil
                }
            }
            if let host = query.hostOrSubdomainOf {
                guard let server = attributes[.server]?.stringValue, Self.server(server, isOrIsUnder: host) else {
                    return nil
                }
            }
        }
        return opened
    }

    /// Whether `server` is `host` (lowercased) or a subdomain of it, without regard to case:
    /// `example.com` and `www.example.com` are under `example.com`; `badexample.com` is not.
    static func server(_ server: String, isOrIsUnder host: String) -> Bool {
        let server = server.lowercased()
        return server == host || server.hasSuffix("." + host)
    }

    /// Unwraps the row's item key — proving every plaintext column — and decrypts its attributes when asked.
    static func open(_ row: ItemRow, keys: KeyVault.Snapshot, attributes wanted: Bool) throws(KeychainError) -> Opened {
        guard !row.malformed else { throw KeychainError.decode("an item's row is malformed") }
        guard let classKey = keys.classKey(for: row.accessibility) else {
            throw KeychainError.locked(
                "items of accessibility \(row.accessibility.rawValue) are unavailable while the keychain is \(keys.lockState)"
            )
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
    static func result(_ opened: Opened, returning: ReturnOptions, releasingHeldKeys: Bool = false)
        throws(KeychainError) -> ItemResult
    {
        let wantsData = returning.contains(.data) || returning.contains(.reference)
        var data = wantsData ? (try ItemSealing.openData(opened.row, itemKey: opened.itemKey) ?? Data()) : nil
        if opened.row.itemClass == .key, !releasingHeldKeys, var stored = data, HeldKeyData.isHeld(stored) {
            data = nil
            defer { stored.resetBytes(in: 0..<stored.count) }
            guard let publicPart = HeldKeyData.publicPart(stored) else {
                throw KeychainError.decode("a held key's data is damaged")
            }
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
