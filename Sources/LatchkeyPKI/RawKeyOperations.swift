package import FoundationEssentials
package import LatchkeyCrypto

/// OpenSSL's EVP calls as `AsymmetricKey` and `Certificate` make them, with nothing around them — no algorithm
/// parsing, no checks, no result shaping (package access): what latchkey-bench's floor, `PKIFloor`, is made of.
package enum RawKeyOperations {
    /// `EVP_DigestSign` with SHA-256: ECDSA, or RSA PKCS #1 v1.5 for an RSA key.
    package static func signSHA256(_ key: AsymmetricKey, _ message: Data) -> Data? {
        OpenSSL.sign(
            key.handle, input: message, digest: "SHA256", hashed: false,
            padding: key.type == .rsa ? .pkcs1 : nil)
    }

    /// `EVP_DigestVerify` with SHA-256.
    package static func verifySHA256(_ key: AsymmetricKey, _ message: Data, signature: Data) -> Bool {
        OpenSSL.verify(
            key.handle, input: message, signature: signature, digest: "SHA256", hashed: false,
            padding: key.type == .rsa ? .pkcs1 : nil)
    }

    /// A new P-256 key (`EVP_PKEY_generate`), its uncompressed point, and its ECDH shared value with `peer`
    /// (a P-256 key).
    package static func ephemeralP256Agreement(with peer: AsymmetricKey) -> (point: Data, shared: SecureBytes)? {
        guard let ephemeral = OpenSSL.generateEC(group: "P-256"), let point = OpenSSL.ecPoint(ephemeral),
            let shared = OpenSSL.derive(ephemeral, peer: peer.handle)
        else { return nil }
        return (point, shared)
    }

    /// The ECDH shared value of `key` (a P-256 private key) and the P-256 point `point`, loaded through
    /// `EVP_PKEY_fromdata` with OpenSSL's check that it lies on the curve.
    package static func p256Agreement(_ key: AsymmetricKey, point: Data) -> SecureBytes? {
        guard let peer = OpenSSL.importEC(group: "P-256", point: point, scalar: nil) else { return nil }
        return OpenSSL.derive(key.handle, peer: peer)
    }

    /// `EVP_Digest` by name ("SHA1", "SHA224", "SHA256", "SHA384", "SHA512") over `parts`.
    package static func digest(_ name: String, _ parts: [UnsafeRawBufferPointer]) -> Data? {
        OpenSSL.digest(name, parts)
    }

    /// AES-GCM with a key of 16, 24 or 32 bytes, no additional data: ciphertext and 16-byte tag.
    package static func aesGCMSeal(key: SecureBytes, iv: [UInt8], plaintext: Data) -> (ciphertext: Data, tag: Data)? {
        OpenSSL.aesGCMSeal(key: key, iv: iv, aad: nil, plaintext: plaintext)
    }

    /// Opens what `aesGCMSeal` made; nil when the tag does not authenticate.
    package static func aesGCMOpen(key: SecureBytes, iv: [UInt8], ciphertext: Data, tag: Data) -> Data? {
        OpenSSL.aesGCMOpen(key: key, iv: iv, aad: nil, ciphertext: ciphertext, tag: tag)
    }

    /// Whether `d2i_X509` takes `der` as one whole certificate: the parse alone.
    package static func parsesAsCertificate(_ der: Data) -> Bool { OpenSSL.parsesAsCertificate(der) }
}
