import FoundationEssentials
import LatchkeyEngine

extension ServiceBackend {
    /// `SecItemCopyMatching` with `kSecMatchItemList` (macOS's file-based keychain): the items the rest of
    /// the query finds that are also in the list — references (`SecCertificate`, `SecKey`, `SecIdentity`,
    /// whose certificate stands for it in a certificate search) and persistent references, as
    /// `FilterCandidateItem` compares them. Each listed item is looked up as `kSecValueRef` or
    /// `kSecValuePersistentRef` would name it, with every other key of the query; the matches come back once
    /// each, in the keychain's order, and `kSecMatchLimit` applies to them. A listed item of another class
    /// matches nothing, as on macOS; a value that is no reference at all is `errSecParam`. Identity searches
    /// keep the identities whose certificate is listed.
    func copyMatching(_ query: [String: Any], itemList value: Any) throws(KeychainError) -> Any? {
        guard let list = value as? [Any] else {
            throw KeychainError.param("kSecMatchItemList must be an array, not \(DictionaryValue.typeName(value))")
        }
        var rest = query
        rest.removeValue(forKey: SecItemKey.matchItemList)
        let decoded = try DictionaryDecoding.decode(rest, for: .search)
        if rest[SecItemKey.valueRef] != nil || rest[SecItemKey.valuePersistentRef] != nil {
            throw KeychainError.param(
                "kSecMatchItemList cannot be combined with kSecValueRef or kSecValuePersistentRef")
        }
        let limit = decoded.limit ?? .one
        if decoded.itemClass == .identity { return try copyIdentities(decoded, limit: limit, listed: list) }
        var found: [Data: ItemResult] = [:]
        for element in list {
            guard let (key, named) = try Self.listed(element, itemClass: decoded.itemClass) else { continue }
            var one = rest
            one[key] = named
            one[SecItemKey.matchLimit] = SecItemKey.matchLimitAll
            var search = itemQuery(try DictionaryDecoding.decode(one, for: .search), limit: .all)
            search.returning = DictionaryResults.fetched(decoded.returning, itemClass: decoded.itemClass)
            do {
                for result in try service.copyMatching(search) where found[result.persistentReference] == nil {
                    found[result.persistentReference] = result
                }
            } catch KeychainError.itemNotFound {
                continue  // Not in the keychain, or not matching the rest of the query: no match, as on macOS.
            }
        }
        // The keychain's order: by row, as a search without a list returns them.
        var results = found.map { (row: PersistentReference.parse($0.key)?.rowID ?? 0, result: $0.value) }
            .sorted { $0.row < $1.row }.map(\.result)
        if let maximum = limit.maximum { results = Array(results.prefix(maximum)) }
        guard !results.isEmpty else { throw KeychainError(.itemNotFound) }
        return try DictionaryResults.shape(
            results, returning: decoded.returning, single: limit == .one, service: service)
    }

    /// An identity search with an item list: the identities found whose certificate is listed — as a
    /// `SecCertificate`, as the certificate of a `SecIdentity`, or by its persistent reference (an identity's
    /// is its certificate's) — as macOS compares an identity by its certificate.
    private func copyIdentities(_ decoded: DictionaryDecoding.Decoded, limit: MatchLimit, listed list: [Any])
        throws(KeychainError) -> Any?
    {
        var references = Set<Data>()
        var certificates = Set<Data>()
        for element in list {
            if let reference = element as? Data {
                references.insert(reference)
            } else if let certificate = element as? any CertificateConvertible {
                certificates.insert(certificate.certificate.derRepresentation)
            } else if let identity = element as? any IdentityConvertible {
                certificates.insert(identity.identityReference.certificate.derRepresentation)
            } else if !(element is any KeyConvertible) {  // A key is no identity: it matches none.
                throw KeychainError.param(
                    "kSecMatchItemList holds references and persistent references, not \(DictionaryValue.typeName(element))"
                )
            }
        }
        return try copyIdentities(decoded, limit: limit) { found in
            references.contains(found.certificate.persistentReference)
                || certificates.contains(found.certificate.data ?? Data())
        }
    }

    /// How a listed item is named to a search of `itemClass` (`kSecValueRef` or `kSecValuePersistentRef`),
    /// or nil when it cannot be an item of that class.
    private static func listed(_ element: Any, itemClass: ItemClass) throws(KeychainError) -> (String, Any)? {
        if let reference = element as? Data {
            guard PersistentReference.parse(reference)?.itemClass == itemClass else { return nil }
            return (SecItemKey.valuePersistentRef, reference)
        }
        if element is any CertificateConvertible {
            return itemClass == .certificate ? (SecItemKey.valueRef, element) : nil
        }
        if element is any KeyConvertible { return itemClass == .key ? (SecItemKey.valueRef, element) : nil }
        if let identity = element as? any IdentityConvertible {
            switch itemClass {
            case .certificate: return (SecItemKey.valueRef, identity.identityReference.certificate)
            case .key:
                switch identity.identityReference.privateKey {
                case .inProcess(let key): return (SecItemKey.valueRef, key)
                case .held(let key): return (SecItemKey.valueRef, key)
                }
            default: return nil
            }
        }
        throw KeychainError.param(
            "kSecMatchItemList holds references and persistent references, not \(DictionaryValue.typeName(element))")
    }
}
