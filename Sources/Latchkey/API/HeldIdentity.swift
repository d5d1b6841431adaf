public import LatchkeyPKI

/// A certificate and the private key the keychain holds for it (`HeldKey`): an identity whose key never
/// enters this process — a TLS client certificate whose key lives in `latchkeyd`, as an identity of a
/// Secure Enclave key does on Apple's platforms. A `kSecClassIdentity` search with `kSecReturnRef` gives one
/// when the certificate's private key is held; it signs and decrypts through its `privateKey`.
public struct HeldIdentity: Sendable, Hashable {
    /// The certificate.
    public let certificate: Certificate
    /// Its private key, held by the keychain.
    public let privateKey: HeldKey

    /// Pairs a certificate with the held key of its public key; `KeyError` `.param` when the key is not the
    /// certificate's (their public keys differ).
    public init(certificate: Certificate, privateKey: HeldKey) throws(KeyError) {
        guard privateKey.publicKey.publicKeyData == certificate.publicKeyBits else {
            throw KeyError(.param, "the private key is not the certificate's (their public keys differ)")
        }
        self.certificate = certificate
        self.privateKey = privateKey
    }
}
