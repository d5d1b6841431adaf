package import FoundationEssentials

/// An X25519 key pair for libsodium sealed boxes (`crypto_box_seal`): anyone with the public key can seal
/// bytes to it; only the secret key opens them. The secret key lives in a `SecureBytes`.
package struct BoxKeyPair: Sendable {
    /// The public key (32 bytes).
    package let publicKey: Data
    /// The seed the pair derives from (32 bytes): what is stored, and all that must be kept secret.
    package let seed: SecureBytes
    private let secretKey: SecureBytes

    /// The pair derived from `seed` (32 bytes; a random one makes a new pair).
    package init(seed: SecureBytes) {
        precondition(seed.count == 32, "a box key seed is 32 bytes")
        var publicKey = Data(count: Sodium.boxPublicKeyBytes)
        self.secretKey = SecureBytes(count: Sodium.boxSecretKeyBytes) { secret in
            publicKey.withUnsafeMutableBytes { out in
                seed.withUnsafeBytes { Sodium.boxKeyPair(seed: $0, publicKey: out, secretKey: secret) }
            }
        }
        self.publicKey = publicKey
        self.seed = seed
    }

    /// A new random pair.
    package static func random() -> BoxKeyPair { BoxKeyPair(seed: SecureBytes(randomCount: 32)) }

    /// Seals `plaintext` to `publicKey` (32 bytes): 48 bytes longer than the plaintext.
    package static func seal(_ plaintext: SecureBytes, to publicKey: Data) throws(CryptoError) -> Data {
        guard publicKey.count == Sodium.boxPublicKeyBytes else { throw .truncated }
        var box = Data(count: plaintext.count + Sodium.boxSealBytes)
        let ok = box.withUnsafeMutableBytes { out in
            plaintext.withUnsafeBytes { p in
                publicKey.withUnsafeBytes { Sodium.boxSeal(output: out, plaintext: p, publicKey: $0) }
            }
        }
        guard ok else { throw .authenticationFailure }
        return box
    }

    /// Opens a box sealed to this pair, into secure memory; `authenticationFailure` when it was sealed to
    /// another key or altered.
    package func open(_ box: Data) throws(CryptoError) -> SecureBytes {
        guard box.count > Sodium.boxSealBytes else { throw .truncated }
        return try SecureBytes(count: box.count - Sodium.boxSealBytes) { (out) throws(CryptoError) in
            let ok = box.withUnsafeBytes { b in
                publicKey.withUnsafeBytes { p in
                    secretKey.withUnsafeBytes { Sodium.boxSealOpen(output: out, box: b, publicKey: p, secretKey: $0) }
                }
            }
            guard ok else { throw .authenticationFailure }
        }
    }
}
