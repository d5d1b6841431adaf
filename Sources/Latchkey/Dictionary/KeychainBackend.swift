import FoundationEssentials
public import LatchkeyEngine
public import LatchkeyPKI

/// The four SecItem operations over Apple-style dictionaries: the Apple-compatible edge. Latchkey serves it
/// with `ServiceBackend` over any `KeychainService` (`DatabaseBackend` over a keychain you opened); on Apple
/// platforms the same contract is served by the system's own `SecItem…` functions.
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
    /// delete-then-add, so a failure cannot lose the old value; `ServiceBackend` does it in one transaction.
    func upsert(_ query: [String: Any], attributes: [String: Any]) throws(KeychainError)
    /// `SecKeyCreateRandomKey` with a token (`kSecAttrTokenID`, or `kSecAttrIsExtractable` false): a private
    /// key made and kept where the keychain runs, with the private key's `attributes` (Apple's keys); its
    /// handle. The default implementation answers `errSecUnimplemented`: a backend of your own holds no keys.
    func createHeldKey(_ type: KeyType, bits: Int, attributes: [String: Any]) throws(KeychainError) -> HeldKey
}

extension KeychainBackend {
    public func createHeldKey(_ type: KeyType, bits: Int, attributes: [String: Any]) throws(KeychainError) -> HeldKey {
        throw KeychainError(.unimplemented, "this keychain backend cannot hold keys")
    }

    public func upsert(_ query: [String: Any], attributes: [String: Any]) throws(KeychainError) {
        do {
            _ = try add(query.merging(attributes) { _, new in new })
        } catch KeychainError.duplicateItem {
            try update(query, with: attributes)
        }
    }
}

/// The dictionary operations over a typed `KeychainService`: each dictionary is decoded with Apple's rules
/// (`DictionaryDecoding`) into a typed request, and each result shaped as Apple returns it.
public struct ServiceBackend: KeychainBackend {
    /// The service the requests go to.
    public let service: any KeychainService

    /// Serves the dictionary operations from `service`.
    public init(service: any KeychainService) { self.service = service }

    public func add(_ attributes: [String: Any]) throws(KeychainError) -> Any? {
        let decoded = try DictionaryDecoding.decode(attributes, for: .add)
        if decoded.itemClass == .identity { return try addIdentity(decoded) }
        let item = NewItem(decoded.itemClass, attributes: decoded.attributes, data: decoded.data)
        let result = try service.add(
            item, returning: DictionaryResults.fetched(decoded.returning, itemClass: item.itemClass))
        return try DictionaryResults.shape(
            result.map { [$0] } ?? [], returning: decoded.returning, single: true, service: service)
    }

    public func copyMatching(_ query: [String: Any]) throws(KeychainError) -> Any? {
        if let list = query[SecItemKey.matchItemList] { return try copyMatching(query, itemList: list) }
        let decoded = try DictionaryDecoding.decode(query, for: .search)
        let limit = decoded.limit ?? .one
        if decoded.itemClass == .identity { return try copyIdentities(decoded, limit: limit) }
        var query = itemQuery(decoded, limit: limit)
        query.returning = DictionaryResults.fetched(decoded.returning, itemClass: decoded.itemClass)
        let results = try service.copyMatching(query)
        return try DictionaryResults.shape(
            results, returning: decoded.returning, single: limit == .one, service: service)
    }

    public func update(_ query: [String: Any], with attributesToUpdate: [String: Any]) throws(KeychainError) {
        let decoded = try DictionaryDecoding.decode(query, for: .update)
        if decoded.itemClass == .identity {
            throw KeychainError(
                .unimplemented,
                "identities are updated through their certificate or their key, not as kSecClassIdentity")
        }
        let changes = try DictionaryDecoding.decodeChanges(attributesToUpdate, itemClass: decoded.itemClass)
        _ = try service.update(itemQuery(decoded, limit: .all), with: changes)
    }

    public func delete(_ query: [String: Any]) throws(KeychainError) {
        let decoded = try DictionaryDecoding.decode(query, for: .delete)
        if decoded.itemClass == .identity { return try deleteIdentities(decoded) }
        _ = try service.delete(itemQuery(decoded, limit: .all))
    }

    public func createHeldKey(_ type: KeyType, bits: Int, attributes: [String: Any]) throws(KeychainError) -> HeldKey {
        var dictionary = attributes
        dictionary[SecItemKey.class] = ItemClass.key.rawValue
        // `kSecAttrIsPermanent` says whether the key is stored; it is no attribute of the item.
        let permanent =
            dictionary.removeValue(forKey: SecItemKey.isPermanent).map { DictionaryValue.boolean($0) == true } ?? true
        let decoded = try DictionaryDecoding.decode(dictionary, for: .add)
        let request = HeldKeyRequest(type: type, bits: bits, attributes: decoded.attributes, isPermanent: permanent)
        guard let made = try service.createHeldKey(request, returning: [.attributes, .data]) else {
            throw KeychainError(.internal, "the new key's item did not come back")
        }
        return try HeldKey(result: made, service: service)
    }

    public func upsert(_ query: [String: Any], attributes: [String: Any]) throws(KeychainError) {
        let decoded = try DictionaryDecoding.decode(query.merging(attributes) { _, new in new }, for: .add)
        _ = try service.addOrUpdate(NewItem(decoded.itemClass, attributes: decoded.attributes, data: decoded.data))
    }

    func itemQuery(_ decoded: DictionaryDecoding.Decoded, limit: MatchLimit) -> ItemQuery {
        var query = ItemQuery(
            decoded.itemClass, matching: decoded.attributes,
            synchronizable: decoded.synchronizableAny ? .any : .no,
            persistentReference: decoded.persistentReference, limit: limit, returning: decoded.returning,
            authenticationUI: decoded.authenticationUI, operationPrompt: decoded.operationPrompt,
            certificateMatch: decoded.certificateMatch)
        query.hostOrSubdomainOf = decoded.hostOrSubdomainOf
        return query
    }
}

/// The dictionary operations on a `KeychainDatabase` you opened, for one caller: `ServiceBackend` over a
/// `LocalKeychainService`.
public struct DatabaseBackend: KeychainBackend {
    /// The keychain.
    public let database: KeychainDatabase
    /// Who the operations run for.
    public let caller: CallerIdentity
    private let backend: ServiceBackend

    /// Creates a backend; `presence` asks the user before an item whose access control asks them is read
    /// or changed (nil: such requests fail with `errSecInteractionNotAllowed`).
    public init(database: KeychainDatabase, caller: CallerIdentity, presence: (any UserPresenceVerifier)? = nil) {
        self.database = database
        self.caller = caller
        self.backend = ServiceBackend(
            service: LocalKeychainService(database: database, caller: caller, presence: presence))
    }

    public func add(_ attributes: [String: Any]) throws(KeychainError) -> Any? { try backend.add(attributes) }
    public func copyMatching(_ query: [String: Any]) throws(KeychainError) -> Any? { try backend.copyMatching(query) }
    public func update(_ query: [String: Any], with attributesToUpdate: [String: Any]) throws(KeychainError) {
        try backend.update(query, with: attributesToUpdate)
    }
    public func delete(_ query: [String: Any]) throws(KeychainError) { try backend.delete(query) }
    public func upsert(_ query: [String: Any], attributes: [String: Any]) throws(KeychainError) {
        try backend.upsert(query, attributes: attributes)
    }
    public func createHeldKey(_ type: KeyType, bits: Int, attributes: [String: Any]) throws(KeychainError) -> HeldKey {
        try backend.createHeldKey(type, bits: bits, attributes: attributes)
    }
}
