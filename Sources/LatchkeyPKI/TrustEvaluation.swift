package import FoundationEssentials

/// What a certificate must be trusted for (`SecPolicy`).
public enum TrustPolicy: Sendable, Hashable {
    /// `SecPolicyCreateBasicX509`: a chain to a trusted anchor, valid on the date, CA constraints respected.
    case basicX509
    /// `SecPolicyCreateSSL`: as basic X.509, plus the TLS purpose (server or client) and, for a server, the
    /// host name (DNS name or IP address) when one is given.
    case ssl(server: Bool, hostname: String?)
}

/// Why a chain is not trusted: Apple's status (as its number) and OpenSSL's reason.
package struct TrustFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// Apple's status: `errSecNotTrusted` (−67843), `errSecCertificateExpired` (−67818),
    /// `errSecCertificateNotValidYet` (−67819), `errSecHostNameMismatch` (−67602),
    /// `errSecNoBasicConstraintsCA` (−67605), `errSecPathLengthConstraintExceeded` (−67611),
    /// `errSecInvalidExtendedKeyUsage` (−67609), `errSecCertificateRevoked` (−67820).
    package let status: Int32
    /// What OpenSSL found, naming the certificate's place in the chain.
    package let reason: String

    package var description: String { reason }
}

/// One trust evaluation (`SecTrust`): the certificates to trust (leaf first, then any intermediates), the
/// policies, the anchors and the date.
package struct TrustEvaluation: Sendable {
    /// The leaf, then certificates that may help build the chain.
    package var certificates: [Certificate]
    /// The policies every one of which must hold.
    package var policies: [TrustPolicy]
    /// Certificates to trust as anchors (`SecTrustSetAnchorCertificates`); empty: the system's store only.
    package var anchors: [Certificate] = []
    /// Whether only `anchors` count (`SecTrustSetAnchorCertificatesOnly`; true once anchors are set, as on
    /// Apple's platforms).
    package var anchorsOnly = true
    /// The date to verify at (`SecTrustSetVerifyDate`); nil: now.
    package var date: Date?

    /// An evaluation of `certificates` (the leaf first) under `policies`.
    package init(certificates: [Certificate], policies: [TrustPolicy]) {
        self.certificates = certificates
        self.policies = policies
    }

    /// Evaluates with OpenSSL against the system's CA store (Debian's /etc/ssl/certs) and the anchors:
    /// the chain built (leaf first) and, when it is not trusted, why.
    package func evaluate() -> (chain: [Certificate], failure: TrustFailure?) {
        guard let leaf = certificates.first else {
            return ([], TrustFailure(status: Self.notTrusted, reason: "there is no certificate to evaluate"))
        }
        var request = OpenSSL.VerificationRequest(
            leaf: leaf.derRepresentation, intermediates: certificates.dropFirst().map(\.derRepresentation),
            anchors: anchors.map(\.derRepresentation), anchorsOnly: !anchors.isEmpty && anchorsOnly, date: date,
            sslServer: nil, hostname: nil)
        for policy in policies {
            if case .ssl(let server, let hostname) = policy, request.sslServer == nil {
                request.sslServer = server
                request.hostname = server ? hostname : nil
            }
        }
        guard let verification = OpenSSL.verify(request) else {
            return (
                [], TrustFailure(status: Self.notTrusted, reason: "a certificate could not be loaded for evaluation")
            )
        }
        // OpenSSL's own encodings of loaded certificates.
        let chain = verification.chain.compactMap { try? Certificate(derRepresentation: $0) }
        guard let error = verification.error else { return (chain, nil) }
        return (chain, TrustFailure(status: OpenSSL.appleStatus(forVerifyError: error.code), reason: error.message))
    }

    static let notTrusted: Int32 = -67843
}
