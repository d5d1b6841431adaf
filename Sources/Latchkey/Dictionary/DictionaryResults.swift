import FoundationEssentials

/// Shapes engine results the way `SecItemCopyMatching` and `SecItemAdd` return them (docs/SEMANTICS.md §2).
enum DictionaryResults {
    /// No return key: nil. Only data: the data. Only a persistent reference: the reference. Anything else:
    /// a dictionary. A limit above one: an array of those, even for one match.
    /// A key the keychain holds comes back as a `HeldKey` that uses it through `service`.
    static func shape(_ results: [ItemResult], returning: ReturnOptions, single: Bool, service: any KeychainService)
        throws(KeychainError) -> Any?
    {
        guard !returning.isEmpty else { return nil }
        var shaped: [Any] = []
        for result in results { shaped.append(try element(result, returning: returning, service: service)) }
        return single ? shaped.first : shaped
    }

    /// What to fetch for what the caller asked: a key's reference needs its class and type attributes too
    /// (they are left out of the result unless asked for).
    static func fetched(_ returning: ReturnOptions, itemClass: ItemClass) -> ReturnOptions {
        returning.contains(.reference) && itemClass == .key ? returning.union(.attributes) : returning
    }

    /// A certificate's reference is the certificate (Apple's `SecCertificateRef`), a key's the key
    /// (`SecKeyRef`): alone when only `kSecReturnRef` was asked for, else under `kSecValueRef` in the
    /// dictionary.
    static func element(_ result: ItemResult, returning: ReturnOptions, service: any KeychainService)
        throws(KeychainError) -> Any
    {
        if returning == .data { return result.data ?? Data() }
        if returning == .persistentReference { return result.persistentReference }
        var reference: Any?
        if returning.contains(.reference) && result.itemClass == .key {
            let key: Any =
                result.attributes[.tokenID] != nil
                ? try HeldKey(result: result, service: service)
                : try KeyAttributes.key(data: result.data ?? Data(), attributes: result.attributes)
            if returning == .reference { return key }
            reference = key
        }
        if returning.contains(.reference) && result.itemClass == .certificate {
            let decoded: Certificate
            do {
                decoded = try Certificate(derRepresentation: result.data ?? Data())
            } catch {
                throw KeychainError.decode(
                    "a certificate item's data is not a certificate, so it has no reference: \(error.reason)")
            }
            if returning == .reference { return decoded }
            reference = decoded
        }
        var dictionary: [String: Any] = [:]
        if returning.contains(.attributes) {
            for (key, value) in result.attributes {
                // The access control comes back as an `AccessControl` (LatchkeySecurity hands out a
                // SecAccessControl for it), as Apple returns a SecAccessControlRef.
                if key == .accessControl, let control = AccessControl(attributeValue: value) {
                    dictionary[key.rawValue] = control
                } else {
                    dictionary[key.rawValue] = DictionaryValue.object(value)
                }
            }
        }
        if let reference {
            dictionary[SecItemKey.valueRef] = reference
            if returning.contains(.data) { dictionary[SecItemKey.valueData] = result.data ?? Data() }
        } else if returning.contains(.data) || returning.contains(.reference) {
            dictionary[SecItemKey.valueData] = result.data ?? Data()
        }
        if returning.contains(.reference) && reference == nil {
            dictionary[SecItemKey.class] = result.itemClass.rawValue
        }
        if returning.contains(.persistentReference) {
            dictionary[SecItemKey.valuePersistentRef] = result.persistentReference
        }
        return dictionary
    }
}
