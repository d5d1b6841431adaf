package import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyPKI
internal import LatchkeyStorage

extension KeychainDatabase {
    /// Finds items (`SecItemCopyMatching`): up to `query.limit` items of the caller's access groups that
    /// match every attribute of the query, with what `query.returning` asks for.
    ///
    /// - Throws: `errSecItemNotFound` when nothing matches; `errSecInteractionNotAllowed` when a matching
    ///   item's class key is unavailable (locked); `errSecDecode` when the only matches are damaged (damaged
    ///   items are skipped when others match); `errSecMissingEntitlement` for a group the caller lacks.
    ///
    /// A match whose access control asks the user releases its secret (`.data`, `.reference`) only after
    /// the user confirms the keychain passphrase through `presence` — asked once per call, outside any
    /// transaction. `query.authenticationUI` `.skip` leaves such items out instead, `.fail` (or no
    /// `presence`) fails with `errSecInteractionNotAllowed`; a declined prompt is `errSecUserCanceled`, a
    /// wrong passphrase `errSecAuthFailed`. Attributes alone never ask. `progress` hears of the candidate
    /// items read (a listing of a whole keychain is long work).
    public func copyMatching(
        _ query: ItemQuery, caller: CallerIdentity, presence: (any UserPresenceVerifier)? = nil,
        progress: ProgressHandler? = nil
    ) throws(KeychainError) -> [ItemResult] {
        try copyMatching(query, caller: caller, presence: presence, progress: progress, releasingHeldKeys: false)
    }

    /// `copyMatching`; with `releasingHeldKeys`, a held key's data is its whole stored form (private half
    /// included) — only for `useHeldKey`, never handed out.
    func copyMatching(
        _ query: ItemQuery, caller: CallerIdentity, presence: (any UserPresenceVerifier)?, progress: ProgressHandler?,
        releasingHeldKeys: Bool
    ) throws(KeychainError) -> [ItemResult] {
        let validated = try RequestValidation.validate(query, caller: caller)
        let selection = try selection(for: validated)
        // Certificate filters look inside the certificate, so they read the data (and ask for it as a read would).
        let wantsData =
            validated.returning.contains(.data) || validated.returning.contains(.reference)
            || validated.certificateMatch != nil
        var confirmed = false
        while true {
            let found = try search(
                selection, wantsData: wantsData, confirmed: confirmed, progress: progress,
                releasingHeldKeys: releasingHeldKeys)
            guard let results = found else {
                // A match needs the user's confirmation: ask with no transaction open, then search again.
                try confirmPresence(caller: caller, query: validated, presence: presence)
                confirmed = true
                continue
            }
            return results
        }
    }

    /// One search in one read transaction; nil when a match needs the user's confirmation first.
    private func search(
        _ selection: ItemSelection, wantsData: Bool, confirmed: Bool, progress: ProgressHandler?,
        releasingHeldKeys: Bool
    ) throws(KeychainError) -> [ItemResult]? {
        let validated = selection.query
        return try mappingStorageErrors {
            try read(oneStatement: validated.certificateMatch == nil) { db -> [ItemResult]? in
                var results: [ItemResult] = []
                var damaged = 0
                let candidates = try selection.candidates(db, includeData: wantsData)
                let reading = ProgressReporter(progress, .reading, total: candidates.count)
                for (index, row) in candidates.enumerated() {
                    defer { reading.report(index + 1) }
                    if wantsData && row.requiresUserPresence && !confirmed {
                        switch validated.authenticationUI {
                        case .skip: continue
                        case .fail:
                            throw KeychainError.locked(
                                "a matching item needs the user's confirmation, and kSecUseAuthenticationUI is fail")
                        case .allow: return nil
                        }
                    }
                    do {
                        guard
                            let opened = try selection.open(row, attributes: validated.returning.contains(.attributes))
                        else {
                            continue
                        }
                        if let match = validated.certificateMatch,
                            try !admits(opened, match, selection: selection, db: db)
                        {
                            continue
                        }
                        results.append(
                            try ItemSelection.result(
                                opened, returning: validated.returning, releasingHeldKeys: releasingHeldKeys))
                    } catch KeychainError.decode {
                        damaged += 1
                        continue
                    }
                    if let limit = validated.limit, results.count >= limit { break }
                }
                if results.isEmpty {
                    throw damaged > 0
                        ? KeychainError.decode("\(damaged) matching item(s) are damaged")
                        : KeychainError(.itemNotFound)
                }
                return results
            }
        }
    }

    /// Runs a search's reads: one SELECT finds every candidate, which is its own snapshot without BEGIN and
    /// COMMIT; only certificate filters may read more (the issuers' chain), in a read transaction.
    private func read<T>(oneStatement: Bool, _ body: (Connection) throws -> T) throws -> T {
        oneStatement ? try pool.readOneStatement(body) : try pool.read(body)
    }

    /// Whether an opened certificate passes the certificate filters: decoded from its data, checked by
    /// `CertificateMatch`, and, for `issuers`, its issuer one of them or issued (up to ten links up) by a
    /// certificate in the keychain that was — as Apple's `items_matching_issuer_parent` walks the chain.
    private func admits(
        _ opened: ItemSelection.Opened, _ match: CertificateMatch, selection: ItemSelection, db: Connection
    ) throws(KeychainError) -> Bool {
        guard let data = try ItemSealing.openData(opened.row, itemKey: opened.itemKey),
            let certificate = try? Certificate(derRepresentation: data)  // Not a certificate: matches no filter.
        else { return false }
        guard match.admits(certificate) else { return false }
        guard !match.issuers.isEmpty else { return true }
        var issuer = [certificate.normalizedIssuer]
        var seen = Set<Data>()
        for _ in 0...10 {
            if issuer.contains(where: match.issuers.contains) { return true }
            seen.formUnion(issuer)
            issuer = try issuersOfCertificates(subjects: issuer, like: selection, db: db).filter { !seen.contains($0) }
            if issuer.isEmpty { return false }
        }
        return false
    }

    /// The issuers of the certificates the caller can see whose subject is one of `subjects`. Certificates
    /// that cannot be opened (locked, damaged) are left out of the walk.
    private func issuersOfCertificates(
        subjects: [Data], like selection: ItemSelection, db: Connection
    ) throws(KeychainError) -> [Data] {
        var issuers: [Data] = []
        let query = selection.query
        for subject in subjects {
            let parents = ValidatedQuery(
                schema: query.schema, filters: [.subject: .data(subject)], groups: query.groups, accessibility: nil,
                synchronizable: query.synchronizable, reference: nil, limit: nil, returning: [.attributes],
                authenticationUI: .skip, operationPrompt: nil, certificateMatch: nil)
            let lookup = ItemSelection(query: parents, keys: selection.keys, indexKey: selection.indexKey)
            let rows = try mappingStorageErrors { try lookup.candidates(db, includeData: false) }
            for row in rows {
                do {
                    if let opened = try lookup.open(row, attributes: true),
                        case .data(let issuer)? = opened.attributes?[.issuer]
                    {
                        issuers.append(issuer)
                    }
                } catch {
                    continue  // A locked or damaged certificate is no link in the chain; the search goes on.
                }
            }
        }
        return issuers
    }

    /// The index key, or `errSecInteractionNotAllowed` when neither the device key nor an unlock has
    /// provided it yet.
    func selection(for query: ValidatedQuery) throws(KeychainError) -> ItemSelection {
        let keys = vault.snapshot()
        return ItemSelection(query: query, keys: keys, indexKey: try indexKey(keys), vault: vault)
    }

    func indexKey(_ keys: KeyVault.Snapshot) throws(KeychainError) -> SecureBytes {
        guard let key = keys.indexKey else {
            throw KeychainError.locked("the keychain has not been unlocked since it was opened (and has no device key)")
        }
        return key
    }
}

extension KeychainDatabase {
    /// The items `query` names, by persistent reference, each with whether its class key is available now —
    /// found through the index digests alone, without opening any item. For listing a locked keychain's
    /// matches as locked rather than hiding them (the Secret Service's `SearchItems`): an entry is unproven
    /// until the item is read with `copyMatching`, which proves it (a damaged index can list an item that
    /// a read then refuses). Only attributes that are indexed can be matched (`cdat`/`mdat` are
    /// `errSecParam`).
    package func locate(_ query: ItemQuery, caller: CallerIdentity) throws(KeychainError) -> [(
        reference: Data, available: Bool
    )] {
        let validated = try RequestValidation.validate(query, caller: caller)
        let selection = try selection(for: validated)
        guard selection.unindexedFilters.isEmpty, validated.hostOrSubdomainOf == nil else {
            throw KeychainError.param("only indexed attributes can be matched without opening items")
        }
        return try mappingStorageErrors {
            // One SELECT, its own snapshot: no BEGIN and COMMIT (a third of the Secret Service's `Locked` read).
            try pool.readOneStatement { db in
                try selection.candidates(db, includeData: false).compactMap { row in
                    for digest in selection.filterDigests where !row.hasIndexDigest(digest) { return nil }
                    let reference = PersistentReference.make(
                        itemClass: row.itemClass, rowID: row.rowID ?? 0, id: row.id)
                    return (reference, selection.keys.classKey(for: row.accessibility) != nil)
                }
            }
        }
    }
}
