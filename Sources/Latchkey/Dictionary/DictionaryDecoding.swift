import FoundationEssentials

/// Turns Apple-style query dictionaries (`kSec…` keys) into typed requests, with Apple's rules
/// (`SecDbQuery.c`): 4-character keys are attributes; other keys are dispatched by their first character
/// (`v_` values, `r_` returns, `m_` matches, `u_` use keys); anything else is `errSecParam`. Keys are
/// examined in sorted order, so the error reported for a dictionary with several bad keys is stable.
enum DictionaryDecoding {
    enum Operation: String {
        case add, search, update, delete
    }

    /// Apple refuses queries with more keys than this ("Past query key limit").
    static let maximumKeys = 128

    struct Decoded {
        var itemClass: ItemClass
        var attributes: [AttributeKey: AttributeValue] = [:]
        var synchronizableAny = false
        var data: Data?
        var persistentReference: Data?
        var limit: MatchLimit?
        var returning: ReturnOptions = []
        /// `kSecUseAuthenticationUI` (or `kSecUseNoAuthenticationUI`).
        var authenticationUI: AuthenticationUI = .allow
        /// `kSecUseOperationPrompt`.
        var operationPrompt: String?
        /// `kSecValueRef`: the certificate an add stores or a query names.
        var certificate: Certificate?
        /// `kSecValueRef`: the key an add stores or a query names.
        var key: KeyReference?
        /// `kSecValueRef`: the identity an add stores or a query names (by its certificate).
        var identity: IdentityReference?
        /// `kSecMatchIssuers`, `kSecMatchValidOnDate`, `kSecMatchSubjectContains`,
        /// `kSecMatchEmailAddressIfPresent`, `kSecMatchCaseInsensitive`, `kSecMatchTrustedOnly`.
        var certificateMatch = CertificateMatch()
        /// `kSecMatchHostOrSubdomainOfHost`.
        var hostOrSubdomainOf: String?
    }

    static func decode(_ dictionary: [String: Any], for operation: Operation) throws(KeychainError) -> Decoded {
        guard dictionary.count <= maximumKeys else {
            throw KeychainError.param("a query may hold at most \(maximumKeys) keys")
        }
        var decoded = Decoded(itemClass: try itemClass(of: dictionary))
        for key in dictionary.keys.sorted() where key != SecItemKey.class {
            let value = dictionary[key]!
            // kCFNull means "now" for kSecMatchValidOnDate; it is no value anywhere else.
            if DictionaryValue.isNull(value) && key != SecItemKey.matchValidOnDate {
                throw KeychainError.param("the value of '\(key)' is null")
            }
            if key.utf8.count == 4 {
                try decodeAttribute(key, value, into: &decoded, operation: operation)
                continue
            }
            switch key.first {
            case "v": try decodeValue(key, value, into: &decoded, operation: operation)
            case "r": try decodeReturn(key, value, into: &decoded, operation: operation)
            case "m": try decodeMatch(key, value, into: &decoded, operation: operation)
            case "u": try decodeUse(key, value, into: &decoded)
            default:
                throw KeychainError.param("'\(key)' is not a keychain query key")
            }
        }
        try applyValueReference(to: &decoded, operation: operation)
        return decoded
    }

    /// A `kSecValueRef` certificate: an add stores its bytes (its attributes are derived by the engine);
    /// a search, update or delete matches the attributes Apple derives from it, beside any given
    /// (given ones win, as on Apple's platforms).
    private static func applyValueReference(to decoded: inout Decoded, operation: Operation) throws(KeychainError) {
        if let identity = decoded.identity {
            guard decoded.itemClass == .identity else {
                throw KeychainError.param("kSecValueRef is an identity but kSecClass is \(decoded.itemClass.rawValue)")
            }
            guard decoded.data == nil else {
                throw KeychainError.param("an identity is added by kSecValueRef alone, without kSecValueData")
            }
            if operation != .add {
                // An identity is named by its certificate.
                decoded.attributes.merge(CertificateAttributes.derived(from: identity.certificate, label: false)) {
                    given, _ in given
                }
            }
            return
        }
        if let reference = decoded.key {
            guard decoded.itemClass == .key else {
                throw KeychainError.param("kSecValueRef is a key but kSecClass is \(decoded.itemClass.rawValue)")
            }
            guard case .inProcess(let key) = reference else {
                guard case .held(let held) = reference else { return }
                if operation == .add {
                    throw KeychainError(
                        .duplicateItem, "the key is held by the keychain, which stored it when it made it")
                }
                var identifying = KeyAttributes.identifying(held.publicKey)
                identifying[.keyClass] = .number(1)
                decoded.attributes.merge(identifying) { given, _ in given }
                return
            }
            if operation == .add {
                guard decoded.data == nil else {
                    throw KeychainError.param("give kSecValueRef or kSecValueData, not both")
                }
                let external: SecureKeyBytes
                do {
                    external = try key.externalRepresentation()
                } catch {
                    throw KeychainError.param("the key cannot be exported to be stored: \(error.reason)")
                }
                decoded.data = external.copiedData()
                decoded.attributes.merge(KeyAttributes.derived(from: key)) { given, _ in given }
            } else {
                decoded.attributes.merge(KeyAttributes.identifying(key)) { given, _ in given }
            }
            return
        }
        guard let certificate = decoded.certificate else { return }
        guard decoded.itemClass == .certificate else {
            throw KeychainError.param("kSecValueRef is a certificate but kSecClass is \(decoded.itemClass.rawValue)")
        }
        if operation == .add {
            guard decoded.data == nil else { throw KeychainError.param("give kSecValueRef or kSecValueData, not both") }
            decoded.data = certificate.derRepresentation
        } else {
            decoded.attributes.merge(CertificateAttributes.derived(from: certificate, label: false)) { given, _ in given
            }
        }
    }

    /// `kSecClass`, or the class inside `kSecValuePersistentRef` when the class is absent.
    static func itemClass(of dictionary: [String: Any]) throws(KeychainError) -> ItemClass {
        guard let value = dictionary[SecItemKey.class] else {
            // Apple takes the class from a kSecValueRef's own attributes.
            if dictionary[SecItemKey.valueRef] is any CertificateConvertible { return .certificate }
            if dictionary[SecItemKey.valueRef] is any KeyConvertible { return .key }
            if dictionary[SecItemKey.valueRef] is any IdentityConvertible { return .identity }
            if let reference = dictionary[SecItemKey.valuePersistentRef] as? Data,
                let parsed = PersistentReference.parse(reference)
            {
                return parsed.itemClass
            }
            throw KeychainError.param("the query has no kSecClass")
        }
        guard let code = value as? String else {
            throw KeychainError.param("kSecClass must be a string, not \(DictionaryValue.typeName(value))")
        }
        guard let itemClass = ItemClass(rawValue: code) else {
            throw KeychainError(.noSuchClass, "there is no item class '\(code)'")
        }
        return itemClass
    }

    private static func decodeAttribute(
        _ key: String, _ value: Any, into decoded: inout Decoded, operation: Operation
    ) throws(KeychainError) {
        if key == SecItemKey.useDataProtectionKeychain { return }
        if key == SecItemKey.accessControl {
            decoded.attributes[.accessControl] = try accessControl(value)
            return
        }
        if key == AttributeKey.synchronizable.rawValue, let text = value as? String,
            text == SecItemKey.synchronizableAny
        {
            // kSecAttrSynchronizableAny: both kinds for searches; dropped on add, as Apple does.
            if operation != .add { decoded.synchronizableAny = true }
            return
        }
        guard let attribute = DictionaryValue.attribute(value) else {
            throw KeychainError.param(
                "attribute '\(key)' cannot hold a value of type \(DictionaryValue.typeName(value))")
        }
        decoded.attributes[AttributeKey(rawValue: key)] = attribute
    }

    private static func decodeValue(
        _ key: String, _ value: Any, into decoded: inout Decoded, operation: Operation
    ) throws(KeychainError) {
        switch key {
        case SecItemKey.valueData:
            guard let bytes = value as? Data else {
                throw KeychainError.param("kSecValueData (v_Data) must be data, not \(DictionaryValue.typeName(value))")
            }
            // securityd's query parser stores a query's value (`query_set_data`) for every operation, and
            // matching never reads it: in a search, update or delete it is accepted and selects nothing.
            // Wrappers pass their whole add dictionary as the update query.
            if operation == .add { decoded.data = bytes }
        case SecItemKey.valuePersistentRef:
            guard let bytes = value as? Data else {
                throw KeychainError.param("kSecValuePersistentRef must be data, not \(DictionaryValue.typeName(value))")
            }
            guard operation != .add else {
                throw KeychainError.param("kSecValuePersistentRef cannot be added")
            }
            decoded.persistentReference = bytes
        case SecItemKey.valueRef:
            if let convertible = value as? any KeyConvertible {
                decoded.key = convertible.keyReference
                return
            }
            if let convertible = value as? any IdentityConvertible {
                decoded.identity = convertible.identityReference
                return
            }
            guard let convertible = value as? any CertificateConvertible else {
                throw KeychainError.param(
                    "kSecValueRef must be a SecCertificate, a SecKey or a SecIdentity, not \(DictionaryValue.typeName(value))"
                )
            }
            decoded.certificate = convertible.certificate
        default:
            throw KeychainError.param("'\(key)' is not a keychain value key")
        }
    }

    private static func decodeReturn(
        _ key: String, _ value: Any, into decoded: inout Decoded, operation: Operation
    ) throws(KeychainError) {
        let option: ReturnOptions
        switch key {
        case SecItemKey.returnData: option = .data
        case SecItemKey.returnAttributes: option = .attributes
        case SecItemKey.returnRef: option = .reference
        case SecItemKey.returnPersistentRef: option = .persistentReference
        default: throw KeychainError.param("'\(key)' is not a keychain return key")
        }
        guard let flag = DictionaryValue.boolean(value) else {
            throw KeychainError.param("'\(key)' must be a boolean, not \(DictionaryValue.typeName(value))")
        }
        switch operation {
        case .update:
            // `_SecItemUpdate` refuses a return type only when it is asked for (its mask is set by a true
            // value): "return data not supported by update", errSecReturnDataUnsupported = errSecParam.
            if flag { throw KeychainError.param("'\(key)' is not supported by update") }
        case .delete:
            // `_SecItemDelete` checks no return type (and the macOS shim prunes them before it): a delete
            // returns nothing, whatever the query asks for.
            break
        case .add, .search:
            if flag { decoded.returning.insert(option) } else { decoded.returning.remove(option) }
        }
    }

    private static func decodeMatch(
        _ key: String, _ value: Any, into decoded: inout Decoded, operation: Operation
    ) throws(KeychainError) {
        // Adds ignore match keys (as the macOS shim strips them); update refuses them, and delete every one
        // but an unlimited match limit (Apple's _SecItemDelete: "match limit not supported by delete";
        // KeychainAccess, SimpleKeychain and Valet send kSecMatchLimitAll).
        if operation == .add { return }
        if operation == .delete, key == SecItemKey.matchLimit, (value as? String) == SecItemKey.matchLimitAll { return }
        if operation == .update || operation == .delete {
            throw KeychainError.param("'\(key)' is not supported by \(operation.rawValue)")
        }
        switch key {
        case SecItemKey.matchLimit:
            if let text = value as? String {
                switch text {
                case SecItemKey.matchLimitOne: decoded.limit = .one
                case SecItemKey.matchLimitAll: decoded.limit = .all
                default: throw KeychainError.param("'\(text)' is not a valid kSecMatchLimit")
                }
            } else if let count = DictionaryValue.integer(value) {
                guard count > 0, let exact = Int(exactly: count) else {
                    throw KeychainError.param("kSecMatchLimit must be a positive number, not \(count)")
                }
                decoded.limit = exact == 1 ? .one : .count(exact)
            } else {
                throw KeychainError.param("kSecMatchLimit cannot be a \(DictionaryValue.typeName(value))")
            }
        case SecItemKey.matchCaseInsensitive, SecItemKey.matchDiacriticInsensitive, SecItemKey.matchWidthInsensitive:
            // Attribute matching stays exact, as on Apple's data-protection keychain; the flags steer the
            // subject filters only (as macOS's `_StringCompareFlagsFromQuery`).
            guard let flag = DictionaryValue.boolean(value) else {
                throw KeychainError.param("'\(key)' must be a boolean, not \(DictionaryValue.typeName(value))")
            }
            switch key {
            case SecItemKey.matchCaseInsensitive: decoded.certificateMatch.caseInsensitive = flag
            case SecItemKey.matchDiacriticInsensitive: decoded.certificateMatch.diacriticInsensitive = flag
            default: decoded.certificateMatch.widthInsensitive = flag
            }
        case SecItemKey.matchIssuers:
            // Apple normalizes each issuer and skips what is not a Name; an array of none filters nothing.
            guard let issuers = value as? [Any] else {
                throw KeychainError.param(
                    "kSecMatchIssuers must be an array of DER names, not \(DictionaryValue.typeName(value))")
            }
            decoded.certificateMatch.issuers = issuers.compactMap { ($0 as? Data).flatMap(Certificate.normalizedName) }
        case SecItemKey.matchValidOnDate:
            if DictionaryValue.isNull(value) {
                decoded.certificateMatch.validOn = Date()
            } else if let date = value as? Date {
                decoded.certificateMatch.validOn = date
            } else {
                throw KeychainError.param(
                    "kSecMatchValidOnDate must be a date or kCFNull, not \(DictionaryValue.typeName(value))")
            }
        case SecItemKey.matchTrustedOnly:
            guard let flag = DictionaryValue.boolean(value) else {
                throw KeychainError.param(
                    "kSecMatchTrustedOnly must be a boolean, not \(DictionaryValue.typeName(value))")
            }
            decoded.certificateMatch.trustedOnly = flag
        case SecItemKey.matchSubjectContains, SecItemKey.matchEmailAddressIfPresent, SecItemKey.matchSubjectStartsWith,
            SecItemKey.matchSubjectEndsWith, SecItemKey.matchSubjectWholeString:
            guard let text = value as? String else {
                throw KeychainError.param("'\(key)' must be a string, not \(DictionaryValue.typeName(value))")
            }
            switch key {
            case SecItemKey.matchSubjectContains: decoded.certificateMatch.subjectContains = text
            case SecItemKey.matchSubjectStartsWith: decoded.certificateMatch.subjectStartsWith = text
            case SecItemKey.matchSubjectEndsWith: decoded.certificateMatch.subjectEndsWith = text
            case SecItemKey.matchSubjectWholeString: decoded.certificateMatch.subjectWholeString = text
            default: decoded.certificateMatch.emailAddressIfPresent = text
            }
        case SecItemKey.matchHostOrSubdomainOfHost:
            guard let host = value as? String else {
                throw KeychainError.param(
                    "kSecMatchHostOrSubdomainOfHost must be a string, not \(DictionaryValue.typeName(value))")
            }
            decoded.hostOrSubdomainOf = host
        case SecItemKey.matchPolicy:
            guard let convertible = value as? any PolicyConvertible else {
                throw KeychainError.param("kSecMatchPolicy must be a SecPolicy, not \(DictionaryValue.typeName(value))")
            }
            // Apple's server: errSecUnsupportedOperation (its errSecUnimplemented) for the other classes.
            guard decoded.itemClass == .certificate || decoded.itemClass == .identity else {
                throw KeychainError(
                    .unimplemented,
                    "kSecMatchPolicy matches certificates and identities, not \(decoded.itemClass.rawValue)")
            }
            decoded.certificateMatch.policy = convertible.trustPolicy
        case let other where SecItemKey.unsupportedMatches.contains(other):
            throw KeychainError(.unimplemented, "'\(other)' matching is not supported yet")
        default:
            throw KeychainError.param("'\(key)' is not a supported kSecMatch key")
        }
    }

    /// `kSecUse…` keys: how to ask the user (`kSecUseAuthenticationUI`, `kSecUseNoAuthenticationUI`), what to
    /// tell them (`kSecUseOperationPrompt`); the others only steer Apple's own user interface.
    private static func decodeUse(_ key: String, _ value: Any, into decoded: inout Decoded) throws(KeychainError) {
        switch key {
        case SecItemKey.useAuthenticationUI:
            guard let text = value as? String, let policy = AuthenticationUI(rawValue: text) else {
                throw KeychainError.param("kSecUseAuthenticationUI must be kSecUseAuthenticationUIAllow, Fail or Skip")
            }
            decoded.authenticationUI = policy
        case SecItemKey.useNoAuthenticationUI:
            guard let flag = DictionaryValue.boolean(value) else {
                throw KeychainError.param(
                    "kSecUseNoAuthenticationUI must be a boolean, not \(DictionaryValue.typeName(value))")
            }
            if flag { decoded.authenticationUI = .fail }
        case SecItemKey.useOperationPrompt:
            guard let text = value as? String else {
                throw KeychainError.param(
                    "kSecUseOperationPrompt must be a string, not \(DictionaryValue.typeName(value))")
            }
            decoded.operationPrompt = text
        case let other where SecItemKey.ignoredUseKeys.contains(other):
            break
        default:
            throw KeychainError.param("'\(key)' is not a supported kSecUse key")
        }
    }

    /// A `kSecAttrAccessControl` value: a `SecAccessControl` (anything `AccessControlConvertible`), or the
    /// attribute's stored form.
    private static func accessControl(_ value: Any) throws(KeychainError) -> AttributeValue {
        if let convertible = value as? any AccessControlConvertible { return convertible.accessControl.attributeValue }
        if let data = value as? Data, let control = AccessControl(attributeValue: .data(data)) {
            return control.attributeValue
        }
        throw KeychainError.param(
            "kSecAttrAccessControl must be a SecAccessControl, not \(DictionaryValue.typeName(value))")
    }

    /// `attributesToUpdate` of `SecItemUpdate`: `kSecValueData` is the new secret; every other key is an
    /// attribute, so `kSecClass` or an `r_`/`m_`/`u_` key there is `errSecNoSuchAttr`.
    static func decodeChanges(_ dictionary: [String: Any], itemClass: ItemClass) throws(KeychainError) -> ItemChanges {
        var changes = ItemChanges()
        for key in dictionary.keys.sorted() {
            let value = dictionary[key]!
            if key == SecItemKey.valueData {
                guard let bytes = value as? Data else {
                    throw KeychainError.param(
                        "kSecValueData (v_Data) must be data, not \(DictionaryValue.typeName(value))")
                }
                changes.data = bytes
                continue
            }
            if key == "musr" || key == SecItemKey.useDataProtectionKeychain { continue }
            if key == SecItemKey.accessControl {
                changes.attributes[.accessControl] = try accessControl(value)
                continue
            }
            guard key.utf8.count == 4 else {
                throw KeychainError(
                    .noSuchAttribute,
                    "'\(key)' is not an attribute of class \(itemClass.rawValue) and cannot be updated")
            }
            guard let attribute = DictionaryValue.attribute(value) else {
                throw KeychainError.param(
                    "attribute '\(key)' cannot hold a value of type \(DictionaryValue.typeName(value))")
            }
            changes.attributes[AttributeKey(rawValue: key)] = attribute
        }
        return changes
    }
}
