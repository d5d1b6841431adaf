import FoundationEssentials
import LatchkeyEngine

/// `kSecClassIdentity` over the typed service: an identity is a certificate joined with the private key
/// (`kcls` 1) whose application label equals the certificate's public key hash — Apple's virtual class
/// (`SecItem.c`'s `explode_identity`, the identity join of `SecItemServer.c`). The certificate and the key
/// stay two items, each validated and stored by the engine.
extension ServiceBackend {
    /// The query's attributes split: those only keys have go to the key, every other one (the certificate's
    /// own, and those both classes have, such as the label and the access group) to the certificate.
    private func split(_ attributes: [AttributeKey: AttributeValue]) -> (
        certificate: [AttributeKey: AttributeValue], key: [AttributeKey: AttributeValue]
    ) {
        let certificateNames = SchemaCatalog.attributes(of: .certificate)
        let keyNames = SchemaCatalog.attributes(of: .key)
        var certificate: [AttributeKey: AttributeValue] = [:]
        var key: [AttributeKey: AttributeValue] = [:]
        for (name, value) in attributes {
            if keyNames.contains(name) && !certificateNames.contains(name) {
                key[name] = value
            } else {
                certificate[name] = value
            }
        }
        return (certificate, key)
    }

    /// The identities the query names, in certificate order, up to `limit` (one request through the agent);
    /// the key's data is read only when `keyData` (a reference or the data was asked for — which may ask the
    /// user, as reading a key does).
    func identities(_ decoded: DictionaryDecoding.Decoded, limit: Int?, keyData: Bool) throws(KeychainError)
        -> [IdentityMatch]
    {
        let (certificateFilters, keyFilters) = split(decoded.attributes)
        let synchronizable: SynchronizableFilter = decoded.synchronizableAny ? .any : .no
        var certificates = ItemQuery(
            .certificate, matching: certificateFilters, synchronizable: synchronizable, limit: .all,
            returning: [.attributes, .data, .persistentReference], authenticationUI: decoded.authenticationUI,
            operationPrompt: decoded.operationPrompt, certificateMatch: decoded.certificateMatch)
        certificates.hostOrSubdomainOf = decoded.hostOrSubdomainOf  // Refused by the engine, as Apple refuses it here.
        let keys = ItemQuery(
            .key, matching: keyFilters, synchronizable: .any, limit: .one,
            returning: keyData ? [.attributes, .data, .persistentReference] : [.attributes, .persistentReference],
            authenticationUI: decoded.authenticationUI, operationPrompt: decoded.operationPrompt)
        return try service.copyIdentities(certificates: certificates, keys: keys, limit: limit)
    }

    /// `SecItemCopyMatching` for `kSecClassIdentity`: a reference is the `Identity` (a `HeldIdentity` when
    /// the keychain holds the private key); attributes are the key's with the certificate's own (type,
    /// encoding, subject, issuer, serial number, key identifier, key hash, label) over them; the data is the
    /// key's; the persistent reference is the certificate's.
    /// `keeping` (for `kSecMatchItemList`) leaves out the identities it refuses before the limit applies.
    func copyIdentities(
        _ decoded: DictionaryDecoding.Decoded, limit: MatchLimit, keeping: ((IdentityMatch) -> Bool)? = nil
    ) throws(KeychainError) -> Any? {
        let returning = decoded.returning
        var found = try identities(
            decoded, limit: keeping == nil ? limit.maximum : nil,
            keyData: returning.contains(.reference) || returning.contains(.data))
        if let keeping {
            found = found.filter(keeping)
            if let maximum = limit.maximum { found = Array(found.prefix(maximum)) }
        }
        guard !found.isEmpty else { throw KeychainError(.itemNotFound) }
        guard !returning.isEmpty else { return nil }
        var shaped: [Any] = []
        for identity in found { shaped.append(try shape(identity, returning: returning)) }
        return limit == .one ? shaped.first : shaped
    }

    private func shape(_ found: IdentityMatch, returning: ReturnOptions) throws(KeychainError) -> Any {
        var reference: (any IdentityConvertible)?
        if returning.contains(.reference) {
            let certificate: Certificate
            do {
                certificate = try Certificate(derRepresentation: found.certificate.data ?? Data())
            } catch {
                throw KeychainError.decode("an identity's certificate is not a certificate: \(error.reason)")
            }
            // Held by the keychain: the search gave its public key; the private key stays where it is.
            let key: KeyReference =
                found.key.attributes[.tokenID] != nil
                ? .held(try HeldKey(result: found.key, service: service))
                : .inProcess(try KeyAttributes.key(data: found.key.data ?? Data(), attributes: found.key.attributes))
            do {
                switch try IdentityReference(certificate: certificate, privateKey: key) {
                case .inProcess(let identity): reference = identity
                case .held(let identity): reference = identity
                }
            } catch {
                throw KeychainError.decode("an identity's key is not its certificate's: \(error.reason)")
            }
        }
        if returning == .reference, let reference { return reference }
        if returning == .data { return found.key.data ?? Data() }
        if returning == .persistentReference { return found.certificate.persistentReference }
        var dictionary: [String: Any] = [:]
        if returning.contains(.attributes) {
            var attributes = found.key.attributes
            for name in [
                AttributeKey.certificateType, .certificateEncoding, .subject, .issuer, .serialNumber, .subjectKeyID,
                .publicKeyHash, .label,
            ] {
                if let value = found.certificate.attributes[name] { attributes[name] = value }
            }
            for (name, value) in attributes where name != .accessControl {
                dictionary[name.rawValue] = DictionaryValue.object(value)
            }
            dictionary[SecItemKey.class] = ItemClass.identity.rawValue
        }
        if let reference { dictionary[SecItemKey.valueRef] = reference }
        if returning.contains(.data) { dictionary[SecItemKey.valueData] = found.key.data ?? Data() }
        if returning.contains(.persistentReference) {
            dictionary[SecItemKey.valuePersistentRef] = found.certificate.persistentReference
        }
        return dictionary
    }

    /// `SecItemAdd` of a `SecIdentity` (`kSecValueRef`): the certificate, then the private key, each with
    /// the attributes Apple derives and those given (the label goes to both). An identity whose certificate
    /// is stored already only adds its key; one whose certificate and key are both stored is
    /// `errSecDuplicateItem`. An identity whose key the keychain holds adds its certificate alone (the key
    /// was stored when it was made).
    func addIdentity(_ decoded: DictionaryDecoding.Decoded) throws(KeychainError) -> Any? {
        guard let identity = decoded.identity else {
            throw KeychainError.param("an identity is added by kSecValueRef (a SecIdentity)")
        }
        if !decoded.returning.isEmpty {
            throw KeychainError(.unimplemented, "adding an identity returns nothing yet; search for it instead")
        }
        let (certificateAttributes, keyOnly) = split(decoded.attributes)
        guard case .inProcess(let inProcess) = identity else {
            // The keychain stored the held key when it made it: only the certificate is new.
            _ = try service.add(
                NewItem(.certificate, attributes: certificateAttributes, data: identity.certificate.derRepresentation),
                returning: [])
            return nil
        }
        var keyAttributes = keyOnly
        for shared in [AttributeKey.label, .accessGroup, .accessible, .synchronizable, .accessControl] {
            if let value = certificateAttributes[shared] { keyAttributes[shared] = value }
        }
        let external: SecureKeyBytes
        do {
            external = try inProcess.privateKey.externalRepresentation()
        } catch {
            throw KeychainError.param("the identity's key cannot be stored: \(error.reason)")
        }
        var certificateWasThere = false
        do {
            _ = try service.add(
                NewItem(.certificate, attributes: certificateAttributes, data: inProcess.certificate.derRepresentation),
                returning: [])
        } catch KeychainError.duplicateItem {
            certificateWasThere = true
        }
        do {
            let attributes = keyAttributes.merging(KeyAttributes.derived(from: inProcess.privateKey)) { given, _ in
                given
            }
            _ = try service.add(NewItem(.key, attributes: attributes, data: external.copiedData()), returning: [])
        } catch KeychainError.duplicateItem {
            if certificateWasThere { throw KeychainError(.duplicateItem) }
        }
        return nil
    }

    /// `SecItemDelete` of identities: each certificate, and its key unless another certificate of the
    /// caller still has that key (Apple keeps a key "still in use").
    func deleteIdentities(_ decoded: DictionaryDecoding.Decoded) throws(KeychainError) {
        let found = try identities(decoded, limit: nil, keyData: false)
        guard !found.isEmpty else { throw KeychainError(.itemNotFound) }
        for identity in found {
            _ = try service.delete(
                ItemQuery(
                    .certificate, synchronizable: .any, persistentReference: identity.certificate.persistentReference,
                    limit: .all))
            guard let hash = identity.certificate.attributes[.publicKeyHash] else { continue }
            let stillUsed: Bool
            do {
                stillUsed =
                    !(try service.copyMatching(
                        ItemQuery(.certificate, matching: [.publicKeyHash: hash], synchronizable: .any))).isEmpty
            } catch KeychainError.itemNotFound {
                stillUsed = false
            }
            if !stillUsed {
                _ = try service.delete(
                    ItemQuery(
                        .key, synchronizable: .any, persistentReference: identity.key.persistentReference, limit: .all))
            }
        }
    }
}
