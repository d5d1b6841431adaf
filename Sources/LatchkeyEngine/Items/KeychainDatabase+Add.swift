import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyStorage

extension KeychainDatabase {
    /// Adds an item (`SecItemAdd`) for `caller`, in one transaction.
    ///
    /// Without `agrp` the item goes to the caller's first access group; without `pdmn` it is `ak`
    /// (certificates: `dk`). `cdat` and `mdat` are set to now. Missing primary-key attributes take their
    /// defaults. Returns the item when `returning` asks for anything.
    ///
    /// - Throws: `errSecDuplicateItem` when a live item has the same primary key (a tombstone is replaced);
    ///   `errSecInteractionNotAllowed` when the class key is unavailable (checked before the duplicate);
    ///   `errSecParam`, `errSecNoSuchAttr`, `errSecMissingEntitlement` for bad input.
    @discardableResult
    public func add(_ item: NewItem, caller: CallerIdentity, returning: ReturnOptions = []) throws(KeychainError)
        -> ItemResult?
    {
        let prepared = try prepareAdd(item, caller: caller)
        let stored = try mappingStorageErrors {
            try pool.write { db in try prepared.insert(into: db, origin: .request) }
        }
        return prepared.result(for: stored, returning: returning)
    }

    /// Adds many items in one transaction: all of them, or — on the first failure (a duplicate, a locked
    /// class, bad input) — none of them. One disk sync for the whole batch. Validation and encryption run
    /// on every core before the transaction starts; only the inserts hold the write lock.
    package func addAll(_ items: [NewItem], caller: CallerIdentity) throws(KeychainError) {
        // One view of the keys for the whole batch (it is added under one lock state), and the digests of
        // the caller's groups computed once rather than per item.
        let keys = vault.snapshot()
        var groupDigests: [String: Data] = [:]
        if let indexKey = keys.indexKey {
            for group in caller.accessGroups { groupDigests[group] = ItemDigests.group(group, key: indexKey) }
        }
        let context = BatchContext(keys: keys, groupDigests: groupDigests)
        let sealed = try ParallelMap.map(items) {
            (item) throws(KeychainError) -> (prepared: PreparedAdd, row: ItemRow, orderKey: UInt64) in
            let prepared = try prepareAdd(item, caller: caller, batch: context)
            let row = prepared.sealedFresh()
            return (prepared, row, ItemDigests.orderKey(row.primaryKeyDigest))
        }
        // Keyed digests are uniformly random, so inserting in the caller's order visits a random leaf of each
        // index per item. In digest order, each index is walked once from one end to the other: the items by
        // their primary-key digest, then every index entry of the batch sorted by its digest.
        let orderKeys = sealed.map(\.orderKey)
        let order = sealed.indices.sorted { orderKeys[$0] < orderKeys[$1] }
        // The change feed's entries and the dirty marks are written at the end too, many to a statement.
        try mappingStorageErrors {
            try pool.bulkWrite { db in
                var entries: [(key: UInt64, digest: Data, rowID: Int64)] = []
                entries.reserveCapacity(sealed.count * 4)
                let deferred = DeferredItemWrites()
                // Tombstones are rare: looked up per item only when the file holds any.
                let tombstones = try ItemTable.hasTombstones(in: db)
                // Through the buffer: `let (prepared, row) = sealed[position]` copied both (a dozen buffers to
                // retain and release); the buffer's elements are borrowed where they are.
                try sealed.withUnsafeBufferPointer { sealed in
                    for position in order {
                        let stored = try sealed[position].prepared.insert(
                            sealed[position].row, into: db, origin: .request, indexingLater: true,
                            checkTombstones: tombstones, deferred: deferred)
                        guard let rowID = stored.rowID else {
                            throw KeychainError(.internal, "an inserted item has no row")
                        }
                        for digest in stored.indexDigests {
                            entries.append((ItemDigests.orderKey(digest), digest, rowID))
                        }
                    }
                }
                try deferred.flush(in: db)
                entries.sort { $0.key < $1.key }
                try IndexTable.insert(entries.map { ($0.digest, $0.rowID) }, in: db)
            }
        }
    }

    /// Adds the item, or — when a live item has its primary key — updates that item with the new item's
    /// other attributes and data, in one transaction: the old value is never deleted before the new one is
    /// safely stored (unlike delete-then-add). Returns true when the item was added.
    /// Updating an item whose access control asks the user needs their confirmation through `presence`,
    /// as `update` does.
    @discardableResult
    public func addOrUpdate(
        _ item: NewItem, caller: CallerIdentity, presence: (any UserPresenceVerifier)? = nil
    ) throws(KeychainError) -> Bool {
        let prepared = try prepareAdd(item, caller: caller)
        var matching = prepared.validated.attributes.filter { prepared.validated.schema.primaryKey.contains($0.key) }
        for name in prepared.validated.schema.primaryKey where matching[name] == nil {
            matching[name] = prepared.validated.schema.defaultValue(for: name)
        }
        matching[.accessGroup] = .string(prepared.validated.group)
        let query = ItemQuery(
            item.itemClass, matching: matching, synchronizable: prepared.validated.synchronizable ? .yes : .no,
            limit: .all)
        var changes = ItemChanges(
            attributes: prepared.validated.attributes.filter { !prepared.validated.schema.primaryKey.contains($0.key) },
            data: item.data ?? Data())
        if item.attributes[.accessible] != nil {
            changes.attributes[.accessible] = .string(prepared.validated.accessibility.rawValue)
        }
        var update = try prepareUpdate(query, with: changes, caller: caller)
        while true {
            do {
                return try mappingStorageErrors {
                    try pool.write { db in
                        do {
                            _ = try prepared.insert(into: db, origin: .request)
                            return true
                        } catch KeychainError.duplicateItem {
                            _ = try update.apply(to: db, origin: .request)
                            return false
                        }
                    }
                }
            } catch {
                guard error == PreparedUpdate.confirmationNeeded else { throw error }
                try confirmPresence(caller: caller, query: update.selection.query, presence: presence)
                update.confirmed = true
            }
        }
    }

    /// Everything an add needs that does not touch the database: validation, keys, digests.
    struct PreparedAdd {
        let validated: ValidatedAdd
        let classKey: SecureBytes
        let attributes: [AttributeKey: AttributeValue]
        let template: ItemRow

        /// Stores the item through `ItemStore` (over its own tombstone when there is one); `errSecDuplicateItem`
        /// when a live item has its primary key. Safe to run again when the transaction is retried.
        func insert(into db: Connection, origin: KeychainChange.Origin) throws -> ItemRow {
            try insert(sealedFresh(), into: db, origin: origin)
        }

        /// The item sealed as a new row (a fresh random id, version 1).
        func sealedFresh() -> ItemRow { sealed(id: SecureRandom.bytes(16), version: 1, rowID: nil) }

        /// Stores `fresh` (made by `sealedFresh()`). `indexingLater`: the caller inserts the returned row's
        /// index entries itself (a batch sorts them); `deferred`: its change-feed entry and dirty mark go there.
        func insert(
            _ fresh: ItemRow, into db: Connection, origin: KeychainChange.Origin, indexingLater: Bool = false,
            checkTombstones: Bool = true, deferred: DeferredItemWrites? = nil
        ) throws -> ItemRow {
            try ItemStore.add(
                fresh, reseal: sealed, origin: origin, in: db, indexingLater: indexingLater,
                checkTombstones: checkTombstones, deferred: deferred)
        }

        func sealed(id: Data, version: Int64, rowID: Int64?) -> ItemRow {
            var row = template
            row.id = id
            row.version = version
            row.rowID = rowID
            let itemKey = ItemSealing.newItemKey()
            ItemSealing.seal(attributes: attributes, data: validated.data, into: &row, itemKey: itemKey)
            ItemSealing.wrap(itemKey, into: &row, classKey: classKey)
            return row
        }

        func result(for stored: ItemRow, returning: ReturnOptions) -> ItemResult? {
            guard !returning.isEmpty else { return nil }
            let wantsData = returning.contains(.data) || returning.contains(.reference)
            return ItemResult(
                itemClass: stored.itemClass, attributes: attributes,
                data: wantsData ? (validated.data ?? Data()) : nil,
                persistentReference: PersistentReference.make(
                    itemClass: stored.itemClass, rowID: stored.rowID ?? 0, id: stored.id))
        }
    }

    /// What every item of a batch shares: the keys as they were when the batch started, and the digests of
    /// the caller's access groups.
    struct BatchContext: Sendable {
        let keys: KeyVault.Snapshot
        let groupDigests: [String: Data]
    }

    /// Validates and digests an add. `dates` keeps a restored item's creation and modification dates;
    /// otherwise both are now. `batch` carries what the items of one `addAll` share.
    func prepareAdd(
        _ item: NewItem, caller: CallerIdentity, dates: (created: Date, modified: Date)? = nil,
        batch: BatchContext? = nil
    ) throws(KeychainError) -> PreparedAdd {
        let validated = try RequestValidation.validate(item, caller: caller)
        let keys = batch?.keys ?? vault.snapshot()
        guard let classKey = keys.classKey(for: validated.accessibility) else {
            throw KeychainError.locked(
                "items of accessibility \(validated.accessibility.rawValue) cannot be added while the keychain is \(keys.lockState)"
            )
        }
        let indexKey = try indexKey(keys)
        let schema = validated.schema
        let now = Date()
        var attributes = validated.attributes
        // Room for what is added below, so the copy this first change makes is the only one (not a copy and
        // then a resize).
        attributes.reserveCapacity(attributes.count + schema.primaryKey.count + 5)
        for name in schema.primaryKey where attributes[name] == nil {
            attributes[name] = schema.defaultValue(for: name)
        }
        attributes[.accessGroup] = .string(validated.group)
        attributes[.accessible] = .string(validated.accessibility.rawValue)
        attributes[.synchronizable] = .number(validated.synchronizable ? 1 : 0)
        attributes[.creationDate] = .date(dates?.created ?? now)
        attributes[.modificationDate] = .date(dates?.modified ?? now)
        let template = ItemRow(
            rowID: nil, id: Data(), itemClass: schema.itemClass,
            groupDigest: batch?.groupDigests[validated.group] ?? ItemDigests.group(validated.group, key: indexKey),
            accessibility: validated.accessibility, synchronizable: validated.synchronizable, tombstone: false,
            version: 1, primaryKeyDigest: ItemDigests.primaryKey(schema: schema, attributes: attributes, key: indexKey),
            indexBlob: ItemRow.indexBlob(
                ItemDigests.indexEntries(itemClass: schema.itemClass, attributes: attributes, key: indexKey)),
            wrappedKey: Data(), sealedAttributes: Data(), sealedData: nil,
            accessControlFlags: validated.accessControl?.flags.rawValue ?? 0)
        return PreparedAdd(validated: validated, classKey: classKey, attributes: attributes, template: template)
    }
}
