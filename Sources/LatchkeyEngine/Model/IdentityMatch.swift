import FoundationEssentials

/// One identity a search found (`kSecClassIdentity`, Apple's join of two classes): a certificate's item and
/// the item of its private key — the key (`kcls` 1) whose application label is the certificate's public key
/// hash. See `KeychainService.copyIdentities`.
public struct IdentityMatch: Sendable, Hashable {
    /// The certificate's item.
    public let certificate: ItemResult
    /// The private key's item.
    public let key: ItemResult

    /// A certificate and its key.
    public init(certificate: ItemResult, key: ItemResult) {
        self.certificate = certificate
        self.key = key
    }
}

extension KeychainService {
    /// `copyIdentities` as two kinds of search: the certificates, then each one's key — how a service that
    /// executes requests answers it (the agent's client sends it as one request, which the agent answers so).
    package func joinedIdentities(certificates: ItemQuery, keys: ItemQuery, limit: Int?) throws(KeychainError)
        -> [IdentityMatch]
    {
        let found: [ItemResult]
        do {
            found = try copyMatching(certificates)
        } catch KeychainError.itemNotFound {
            return []
        }
        var matches: [IdentityMatch] = []
        for certificate in found {
            guard case .data(let hash)? = certificate.attributes[.publicKeyHash] else { continue }
            var query = keys
            query.matching[.keyClass] = .number(1)
            query.matching[.applicationLabel] = .data(hash)
            query.limit = .one
            let key: ItemResult?
            do {
                key = try copyMatching(query).first
            } catch KeychainError.itemNotFound {
                continue
            }
            guard let key else { continue }
            matches.append(IdentityMatch(certificate: certificate, key: key))
            if let limit, matches.count >= limit { break }
        }
        return matches
    }
}
