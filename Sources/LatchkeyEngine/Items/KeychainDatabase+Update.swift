import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyStorage

extension KeychainDatabase {
    /// Updates every matching item (`SecItemUpdate`) in one transaction and returns how many changed.
    ///
    /// `mdat` is refreshed. Changing primary-key attributes, the access group or the sync flag onto a live
    /// item's key fails with `errSecDuplicateItem` (and changes nothing). The query's `limit` must be left
    /// at `.one` or `.all` (both mean every match here) and `returning` empty, else `errSecParam`.
    ///
    /// Changing an item whose access control asks the user (`AccessControl.requiresUserPresence`) needs the
    /// user's confirmation through `presence`, asked once per call and outside any transaction;
    /// `query.authenticationUI` `.fail`, or no `presence`, makes it `errSecInteractionNotAllowed`, and
    /// `.skip` is `errSecParam` (Apple allows it only for searches).
    @discardableResult
    public func update(
        _ query: ItemQuery, with changes: ItemChanges, caller: CallerIdentity,
        presence: (any UserPresenceVerifier)? = nil
    ) throws(KeychainError) -> Int {
        var prepared = try prepareUpdate(query, with: changes, caller: caller)
        while true {
            do {
                return try mappingStorageErrors {
                    try pool.write { db in try prepared.apply(to: db, origin: .request) }
                }
            } catch {
                guard error == PreparedUpdate.confirmationNeeded else { throw error }
                try confirmPresence(caller: caller, query: prepared.selection.query, presence: presence)
                prepared.confirmed = true
            }
        }
    }

    /// Validates an update. `modified` is the modification date to write (now unless restoring).
    func prepareUpdate(_ query: ItemQuery, with changes: ItemChanges, caller: CallerIdentity, modified: Date = Date())
        throws(KeychainError) -> PreparedUpdate
    {
        try Self.requireFilterOnly(query, operation: "update")
        if query.authenticationUI == .skip {
            throw KeychainError.param("kSecUseAuthenticationUISkip is allowed only for SecItemCopyMatching")
        }
        let validated = try RequestValidation.validate(query, caller: caller)
        let change = try RequestValidation.validate(changes, schema: validated.schema, caller: caller)
        return PreparedUpdate(selection: try selection(for: validated), change: change, now: modified)
    }

    /// An update, validated and ready to run inside a write transaction.
    struct PreparedUpdate {
        let selection: ItemSelection
        let change: ValidatedChanges
        let now: Date
        /// Whether the user confirmed their presence for this call (items whose access control asks them
        /// are changed only then).
        var confirmed = false
        /// Whether the changes are the item's whole attributes (a snapshot's version of it): the attributes
        /// they do not name go, except its creation date, group, accessibility, sync flag and held key.
        var replacingAttributes = false

        /// Thrown out of the transaction when a match needs the user's confirmation and has not had it
        /// (the caller asks, outside the transaction, and runs the update again).
        static let confirmationNeeded = KeychainError(.interactionNotAllowed, "the user's confirmation is needed")

        /// Updates every match; returns how many. Safe to run again when the transaction is retried.
        func apply(to db: Connection, origin: KeychainChange.Origin) throws -> Int {
            let keys = selection.keys
            let indexKey = selection.indexKey
            let schema = selection.query.schema
            var updated = 0
            var damaged = 0
            for candidate in try selection.candidates(db, includeData: false) {
                let opened: ItemSelection.Opened
                do {
                    guard let match = try selection.open(candidate, attributes: true) else { continue }
                    opened = match
                } catch {
                    guard error.status == .decode else { throw error }
                    damaged += 1
                    continue
                }
                if opened.row.requiresUserPresence && !confirmed {
                    guard selection.query.authenticationUI == .allow else {
                        throw KeychainError.locked(
                            "a matching item needs the user's confirmation, and kSecUseAuthenticationUI is fail")
                    }
                    throw Self.confirmationNeeded
                }
                var attributes = opened.attributes ?? [:]
                if replacingAttributes {
                    let kept: Set<AttributeKey> = [.creationDate, .accessGroup, .accessible, .synchronizable, .tokenID]
                    attributes = attributes.filter { kept.contains($0.key) }
                }
                attributes.merge(change.attributes) { _, new in new }
                let group = change.group ?? attributes[.accessGroup]?.stringValue ?? ""
                let accessibility = change.accessibility ?? opened.row.accessibility
                if opened.attributes?[.tokenID] != nil {
                    if change.data != nil {
                        throw KeychainError.param("a key the keychain holds keeps its key: its data cannot be replaced")
                    }
                    if !accessibility.isThisDeviceOnly {
                        throw KeychainError.param(
                            "a key the keychain holds never leaves this device: its accessibility stays …ThisDeviceOnly"
                        )
                    }
                }
                let synchronizable = change.synchronizable ?? opened.row.synchronizable
                // The access control after the change (the new one, or the item's own).
                let control = attributes[.accessControl].flatMap(AccessControl.init(attributeValue:))
                if let control {
                    guard accessibility == control.protection else {
                        throw KeychainError.param("conflicting kSecAttrAccessible and kSecAttrAccessControl attributes")
                    }
                    if synchronizable && !control.flags.isEmpty {
                        throw KeychainError.param(
                            "an item with kSecAttrAccessControl constraints is not synchronizable")
                    }
                }
                attributes[.accessGroup] = .string(group)
                attributes[.accessible] = .string(accessibility.rawValue)
                attributes[.synchronizable] = .number(synchronizable ? 1 : 0)
                attributes[.modificationDate] = .date(now)
                guard let classKey = keys.classKey(for: accessibility) else {
                    throw KeychainError.locked(
                        "items cannot move to accessibility \(accessibility.rawValue) while the keychain is \(keys.lockState)"
                    )
                }

                var row = opened.row
                row.groupDigest = ItemDigests.group(group, key: indexKey)
                row.accessibility = accessibility
                row.synchronizable = synchronizable
                row.accessControlFlags = control?.flags.rawValue ?? 0
                row.version += 1
                row.primaryKeyDigest = ItemDigests.primaryKey(schema: schema, attributes: attributes, key: indexKey)
                let oldIndex = opened.row
                row.indexDigests = ItemDigests.indexEntries(
                    itemClass: schema.itemClass, attributes: attributes, key: indexKey)

                if let data = change.data {
                    let itemKey = ItemSealing.newItemKey()
                    ItemSealing.seal(attributes: attributes, data: data, into: &row, itemKey: itemKey)
                    ItemSealing.wrap(itemKey, into: &row, classKey: classKey)
                } else {
                    // Same secret, same item key: re-wrap it (the class or flag may have changed) and re-seal the
                    // attributes (the version changed); the secret's ciphertext stays as it is.
                    ItemSealing.seal(attributes: attributes, into: &row, itemKey: opened.itemKey)
                    ItemSealing.wrap(opened.itemKey, into: &row, classKey: classKey)
                }
                try ItemStore.update(oldIndex, to: row, keepingData: change.data == nil, origin: origin, in: db)
                updated += 1
            }
            if updated == 0 {
                throw damaged > 0
                    ? KeychainError.decode("\(damaged) matching item(s) are damaged")
                    : KeychainError(.itemNotFound)
            }
            return updated
        }
    }

    /// Update and delete act on every match; a numeric limit, a return request, a certificate filter or a
    /// host match is Apple's `errSecParam`.
    static func requireFilterOnly(_ query: ItemQuery, operation: String) throws(KeychainError) {
        if case .count = query.limit {
            throw KeychainError.param("m_Limit is not supported by \(operation)")
        }
        if !query.returning.isEmpty {
            throw KeychainError.param("r_* return keys are not supported by \(operation)")
        }
        // Certificate filters select only in searches: an update or delete that ignored them would change
        // or remove every certificate its attributes name (Apple refuses kSecMatch… keys here too).
        if !query.certificateMatch.isEmpty || query.hostOrSubdomainOf != nil {
            throw KeychainError.param(
                "kSecMatch… filters are not supported by \(operation); name the items by their attributes")
        }
    }
}
