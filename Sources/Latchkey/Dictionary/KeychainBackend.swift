/// The four SecItem operations over Apple-style dictionaries: the contract between the friendly API and a
/// keychain. On Linux it is served by `DatabaseBackend` (a `KeychainDatabase` and a caller identity); on
/// Apple platforms the same contract can be served by the system's own `SecItem…` functions.
///
/// Results have Apple's shapes: nil, `Data`, `[String: Any]`, or an array of those.
public protocol KeychainBackend: Sendable {
    /// `SecItemAdd`: adds the item the dictionary describes; returns what its `kSecReturn…` keys ask for.
    func add(_ attributes: [String: Any]) throws(KeychainError) -> Any?
    /// `SecItemCopyMatching`.
    func copyMatching(_ query: [String: Any]) throws(KeychainError) -> Any?
    /// `SecItemUpdate`.
    func update(_ query: [String: Any], with attributesToUpdate: [String: Any]) throws(KeychainError)
    /// `SecItemDelete`.
    func delete(_ query: [String: Any]) throws(KeychainError)
    /// Stores `attributes` (with `kSecValueData`) in the item `query` names: adds it, or updates it when it
    /// exists. The default implementation adds and, on `errSecDuplicateItem`, updates — never
    /// delete-then-add, so a failure cannot lose the old value; `DatabaseBackend` does it in one transaction.
    func upsert(_ query: [String: Any], attributes: [String: Any]) throws(KeychainError)
}

extension KeychainBackend {
    public func upsert(_ query: [String: Any], attributes: [String: Any]) throws(KeychainError) {
        do {
            _ = try add(query.merging(attributes) { _, new in new })
        } catch {
            guard error.status == .duplicateItem else { throw error }
            try update(query, with: attributes)
        }
    }
}

/// Serves the dictionary operations from a `KeychainDatabase` for one caller identity.
public struct DatabaseBackend: KeychainBackend {
    /// The keychain.
    public let database: KeychainDatabase
    /// Who the operations run for.
    public let caller: CallerIdentity

    /// Creates a backend.
    public init(database: KeychainDatabase, caller: CallerIdentity) {
        self.database = database
        self.caller = caller
    }

    public func add(_ attributes: [String: Any]) throws(KeychainError) -> Any? {
        let decoded = try DictionaryDecoding.decode(attributes, for: .add)
        let item = NewItem(decoded.itemClass, attributes: decoded.attributes, data: decoded.data)
        if decoded.returning.contains(.reference) && (item.itemClass == .certificate || item.itemClass == .key) {
            throw KeychainError(.unimplemented, "r_Ref for \(item.itemClass.rawValue) items arrives with certificates and keys")
        }
        let result = try database.add(item, caller: caller, returning: decoded.returning)
        return DictionaryResults.shape(result.map { [$0] } ?? [], returning: decoded.returning, single: true)
    }

    public func copyMatching(_ query: [String: Any]) throws(KeychainError) -> Any? {
        let decoded = try DictionaryDecoding.decode(query, for: .search)
        let limit = decoded.limit ?? .one
        let results = try database.copyMatching(itemQuery(decoded, limit: limit), caller: caller)
        return DictionaryResults.shape(results, returning: decoded.returning, single: limit == .one)
    }

    public func update(_ query: [String: Any], with attributesToUpdate: [String: Any]) throws(KeychainError) {
        let decoded = try DictionaryDecoding.decode(query, for: .update)
        let changes = try DictionaryDecoding.decodeChanges(attributesToUpdate, itemClass: decoded.itemClass)
        try database.update(itemQuery(decoded, limit: .all), with: changes, caller: caller)
    }

    public func delete(_ query: [String: Any]) throws(KeychainError) {
        let decoded = try DictionaryDecoding.decode(query, for: .delete)
        try database.delete(itemQuery(decoded, limit: .all), caller: caller)
    }

    public func upsert(_ query: [String: Any], attributes: [String: Any]) throws(KeychainError) {
        let decoded = try DictionaryDecoding.decode(query.merging(attributes) { _, new in new }, for: .add)
        try database.addOrUpdate(NewItem(decoded.itemClass, attributes: decoded.attributes, data: decoded.data), caller: caller)
    }

    private func itemQuery(_ decoded: DictionaryDecoding.Decoded, limit: MatchLimit) -> ItemQuery {
        ItemQuery(
            decoded.itemClass, matching: decoded.attributes,
            synchronizable: decoded.synchronizableAny ? .any : .no,
            persistentReference: decoded.persistentReference, limit: limit, returning: decoded.returning)
    }
}
