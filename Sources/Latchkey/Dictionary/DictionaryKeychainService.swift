import FoundationEssentials
import LatchkeyEngine

/// `KeychainService` over any `KeychainBackend` of Apple-style dictionaries — the adapter that lets the
/// friendly API run over a backend of your own, or over the system's `SecItem…` functions on Apple
/// platforms. Typed requests become dictionaries with Apple's keys; the results come back as dictionaries
/// (attributes, data and persistent reference are always asked for, then trimmed to what was requested).
/// A dictionary backend has no lock state, settings or registrations: those answer `errSecUnimplemented`.
struct DictionaryKeychainService: KeychainService {
    let backend: any KeychainBackend

    private static func dictionary(_ itemClass: ItemClass, _ attributes: [AttributeKey: AttributeValue]) -> [String:
        Any]
    {
        var dictionary: [String: Any] = [SecItemKey.class: itemClass.rawValue]
        for (key, value) in attributes {
            dictionary[key.rawValue] =
                key == .synchronizable ? (value == .bool(true) || value == .number(1)) : DictionaryValue.object(value)
        }
        return dictionary
    }

    private static func dictionary(_ query: ItemQuery, limit: MatchLimit?) -> [String: Any] {
        var dictionary = dictionary(query.itemClass, query.matching)
        switch query.synchronizable {
        case .no: break
        case .yes: dictionary[AttributeKey.synchronizable.rawValue] = true
        case .any: dictionary[AttributeKey.synchronizable.rawValue] = SecItemKey.synchronizableAny
        }
        if let reference = query.persistentReference { dictionary[SecItemKey.valuePersistentRef] = reference }
        switch limit {
        case .one?: dictionary[SecItemKey.matchLimit] = SecItemKey.matchLimitOne
        case .all?: dictionary[SecItemKey.matchLimit] = SecItemKey.matchLimitAll
        case .count(let count)?: dictionary[SecItemKey.matchLimit] = count
        case nil: break
        }
        return dictionary
    }

    /// The certificate filters as Apple's `kSecMatch…` keys (searches only: update and delete refuse them).
    private static func matching(_ match: CertificateMatch, into dictionary: inout [String: Any]) {
        if !match.issuers.isEmpty {
            dictionary[SecItemKey.matchIssuers] = match.issuers.map(Certificate.nameSequence)
        }
        if let date = match.validOn { dictionary[SecItemKey.matchValidOnDate] = date }
        if let text = match.subjectContains { dictionary[SecItemKey.matchSubjectContains] = text }
        if let text = match.subjectStartsWith { dictionary[SecItemKey.matchSubjectStartsWith] = text }
        if let text = match.subjectEndsWith { dictionary[SecItemKey.matchSubjectEndsWith] = text }
        if let text = match.subjectWholeString { dictionary[SecItemKey.matchSubjectWholeString] = text }
        if let policy = match.policy { dictionary[SecItemKey.matchPolicy] = policy }
        if let address = match.emailAddressIfPresent { dictionary[SecItemKey.matchEmailAddressIfPresent] = address }
        if match.caseInsensitive { dictionary[SecItemKey.matchCaseInsensitive] = true }
        if match.diacriticInsensitive { dictionary[SecItemKey.matchDiacriticInsensitive] = true }
        if match.widthInsensitive { dictionary[SecItemKey.matchWidthInsensitive] = true }
        if match.trustedOnly { dictionary[SecItemKey.matchTrustedOnly] = true }
    }

    /// Asks for everything, as a dictionary per item.
    private static func askingForEverything(_ dictionary: [String: Any], data: Bool) -> [String: Any] {
        var dictionary = dictionary
        dictionary[SecItemKey.returnAttributes] = true
        dictionary[SecItemKey.returnPersistentRef] = true
        if data { dictionary[SecItemKey.returnData] = true }
        return dictionary
    }

    private static func result(_ value: Any, itemClass: ItemClass, returning: ReturnOptions) throws(KeychainError)
        -> ItemResult
    {
        guard let dictionary = value as? [String: Any] else {
            throw KeychainError(
                .internal, "the backend answered with a \(DictionaryValue.typeName(value)), not a dictionary")
        }
        var attributes: [AttributeKey: AttributeValue] = [:]
        if returning.contains(.attributes) {
            for (key, value) in dictionary where key.utf8.count == 4 {
                if let attribute = DictionaryValue.attribute(value) {
                    attributes[AttributeKey(rawValue: key)] = attribute
                }
            }
        }
        let wantsData = returning.contains(.data) || returning.contains(.reference)
        return ItemResult(
            itemClass: itemClass, attributes: attributes,
            data: wantsData ? (dictionary[SecItemKey.valueData] as? Data ?? Data()) : nil,
            persistentReference: dictionary[SecItemKey.valuePersistentRef] as? Data ?? Data())
    }

    private func add(_ item: NewItem, returning: ReturnOptions) throws(KeychainError) -> ItemResult? {
        var dictionary = Self.dictionary(item.itemClass, item.attributes)
        if let data = item.data { dictionary[SecItemKey.valueData] = data }
        guard !returning.isEmpty else {
            _ = try backend.add(dictionary)
            return nil
        }
        let value = try backend.add(Self.askingForEverything(dictionary, data: returning.contains(.data)))
        return try value.map { (value) throws(KeychainError) in
            try Self.result(value, itemClass: item.itemClass, returning: returning)
        }
    }

    private func find(_ query: ItemQuery) throws(KeychainError) -> [ItemResult] {
        let wantsData = query.returning.contains(.data) || query.returning.contains(.reference)
        var dictionary = Self.dictionary(query, limit: query.limit == .one ? .all : query.limit)
        Self.matching(query.certificateMatch, into: &dictionary)
        if let host = query.hostOrSubdomainOf { dictionary[SecItemKey.matchHostOrSubdomainOfHost] = host }
        let asked = Self.askingForEverything(dictionary, data: wantsData)
        let values = try backend.copyMatching(asked) as? [Any] ?? []
        var results: [ItemResult] = []
        for value in values.prefix(query.limit == .one ? 1 : Int.max) {
            results.append(try Self.result(value, itemClass: query.itemClass, returning: query.returning))
        }
        return results
    }

    private func update(_ query: ItemQuery, with changes: ItemChanges) throws(KeychainError) -> Int {
        var attributes = Self.dictionary(query.itemClass, changes.attributes)
        attributes[SecItemKey.class] = nil
        if let data = changes.data { attributes[SecItemKey.valueData] = data }
        let count = try countMatches(query)
        try backend.update(Self.dictionary(query, limit: nil), with: attributes)
        return count
    }

    private func delete(_ query: ItemQuery) throws(KeychainError) -> Int {
        let count = try countMatches(query)
        try backend.delete(Self.dictionary(query, limit: nil))
        return count
    }

    /// How many items a query matches (a dictionary backend's update and delete do not say).
    private func countMatches(_ query: ItemQuery) throws(KeychainError) -> Int {
        do throws(KeychainError) {
            return (try backend.copyMatching(Self.dictionary(query, limit: .all)) as? [Any])?.count ?? 0
        } catch KeychainError.itemNotFound {
            return 0
        }
    }

    private func addOrUpdate(_ item: NewItem) throws(KeychainError) -> Bool {
        var dictionary = Self.dictionary(item.itemClass, item.attributes)
        if let data = item.data { dictionary[SecItemKey.valueData] = data }
        do {
            _ = try backend.add(dictionary)
            return true
        } catch KeychainError.duplicateItem {
        }
        var key = item.attributes.filter { item.itemClass.primaryKey.contains($0.key) }
        if let group = item.attributes[.accessGroup] { key[.accessGroup] = group }
        let synchronizable: SynchronizableFilter = item.attributes[.synchronizable] == .bool(true) ? .yes : .no
        _ = try update(
            ItemQuery(item.itemClass, matching: key, synchronizable: synchronizable),
            with: ItemChanges(
                attributes: item.attributes.filter { !key.keys.contains($0.key) }, data: item.data ?? Data()))
        return false
    }

    func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        switch request {
        case .add(let item, let returning): return .item(try add(item, returning: returning))
        case .copyMatching(let query): return .items(try find(query))
        case .update(let query, let changes): return .count(try update(query, with: changes))
        case .delete(let query): return .count(try delete(query))
        case .addOrUpdate(let item): return .flag(try addOrUpdate(item))
        case .copyIdentities(let certificates, let keys, let limit):
            return .identities(try joinedIdentities(certificates: certificates, keys: keys, limit: limit))
        case .locate:
            throw KeychainError(
                .unimplemented, "a dictionary backend has no index to list items by without opening them")
        case .createHeldKey:
            throw KeychainError(
                .unimplemented, "a dictionary backend makes held keys with SecKeyCreateRandomKey, not as typed requests"
            )
        case .importHeldKey:
            throw KeychainError(
                .unimplemented, "a dictionary backend stores keys with SecItemAdd, not as typed requests")
        case .useHeldKey:
            throw KeychainError(
                .unimplemented, "a dictionary backend uses held keys through SecKey, not as typed requests")
        case .releaseHeldKey:
            throw KeychainError(
                .unimplemented, "a dictionary backend releases held keys through SecKey, not as typed requests")
        case .status, .unlock, .lock, .settings, .updateSettings, .listRegistrations, .register, .unregister:
            throw KeychainError(.unimplemented, "a dictionary backend has no lock state, settings or registrations")
        case .accessLists, .grantAccess, .revokeAccess:
            throw KeychainError(.unimplemented, "a dictionary backend has no access lists")
        }
    }
}
