/// An identity: a certificate and the private key of its public key (`SecIdentity`).
public struct Identity: Sendable, Hashable {
    /// The certificate.
    public let certificate: Certificate
    /// Its private key.
    public let privateKey: AsymmetricKey

    /// Pairs a certificate with its private key; `KeyError` `.param` when the key is public or is not the
    /// certificate's (its public key differs from the certificate's).
    public init(certificate: Certificate, privateKey: AsymmetricKey) throws(KeyError) {
        guard privateKey.isPrivate else { throw KeyError(.param, "an identity needs a private key") }
        guard privateKey.publicKeyData == certificate.publicKeyBits else {
            throw KeyError(.param, "the private key is not the certificate's (their public keys differ)")
        }
        self.certificate = certificate
        self.privateKey = privateKey
    }
}
