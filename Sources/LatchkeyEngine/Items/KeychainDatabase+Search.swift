import Foundation
internal import LatchkeyCrypto
internal import LatchkeyStorage

extension KeychainDatabase {
    /// Finds items (`SecItemCopyMatching`): up to `query.limit` items of the caller's access groups that
    /// match every attribute of the query, with what `query.returning` asks for.
    ///
    /// - Throws: `errSecItemNotFound` when nothing matches; `errSecInteractionNotAllowed` when a matching
    ///   item's class key is unavailable (locked); `errSecDecode` when the only matches are damaged (damaged
    ///   items are skipped when others match); `errSecMissingEntitlement` for a group the caller lacks.
    public func copyMatching(_ query: ItemQuery, caller: CallerIdentity) throws(KeychainError) -> [ItemResult] {
        let validated = try RequestValidation.validate(query, caller: caller)
        let selection = try selection(for: validated)
        let wantsData = validated.returning.contains(.data) || validated.returning.contains(.reference)
        return try mappingStorageErrors {
            try pool.read { db in
                var results: [ItemResult] = []
                var damaged = 0
                for row in try selection.candidates(db, includeData: wantsData) {
                    do {
                        guard let opened = try selection.open(row, attributes: validated.returning.contains(.attributes)) else {
                            continue
                        }
                        results.append(try ItemSelection.result(opened, returning: validated.returning))
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

    /// The index key, or `errSecInteractionNotAllowed` when neither the device key nor an unlock has
    /// provided it yet.
    func selection(for query: ValidatedQuery) throws(KeychainError) -> ItemSelection {
        let keys = vault.snapshot()
        return ItemSelection(query: query, keys: keys, indexKey: try indexKey(keys))
    }

    func indexKey(_ keys: KeyVault.Snapshot) throws(KeychainError) -> SecureBytes {
        guard let key = keys.indexKey else {
            throw KeychainError.locked("the keychain has not been unlocked since it was opened (and has no device key)")
        }
        return key
    }
}
