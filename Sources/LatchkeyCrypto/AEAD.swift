package import FoundationEssentials

/// Authenticated encryption with XChaCha20-Poly1305 (libsodium's IETF construction).
///
/// A sealed box is `nonce (24 bytes) ‖ ciphertext ‖ tag (16 bytes)`; every box gets a fresh random
/// nonce, which the 192-bit nonce makes safe without a counter.
package enum AEAD {
    /// Key length in bytes (32).
    package static let keyLength = Sodium.aeadKeyBytes
    /// Nonce length in bytes (24).
    package static let nonceLength = Sodium.aeadNonceBytes
    /// Tag length in bytes (16).
    package static let tagLength = Sodium.aeadTagBytes
    /// Bytes a sealed box adds to its plaintext.
    package static let overhead = nonceLength + tagLength

    /// Encrypts `plaintext` under `key`, authenticating `associatedData` too.
    package static func seal(
        _ plaintext: UnsafeRawBufferPointer, key: SecureBytes, associatedData: UnsafeRawBufferPointer
    ) -> Data {
        precondition(key.count == keyLength, "AEAD key must be \(keyLength) bytes")
        var box = Data(count: nonceLength + plaintext.count + tagLength)
        box.withUnsafeMutableBytes { out in
            let nonce = UnsafeMutableRawBufferPointer(rebasing: out[0..<nonceLength])
            Sodium.fillRandom(nonce)
            key.withUnsafeBytes { keyBytes in
                Sodium.aeadEncrypt(
                    output: UnsafeMutableRawBufferPointer(rebasing: out[nonceLength...]),
                    plaintext: plaintext, associatedData: associatedData,
                    nonce: UnsafeRawBufferPointer(nonce), key: keyBytes)
            }
        }
        return box
    }

    /// Encrypts `plaintext` under `key`, authenticating `associatedData` too.
    package static func seal(_ plaintext: Data, key: SecureBytes, associatedData: some ContiguousBytes) -> Data {
        plaintext.withUnsafeBytes { p in associatedData.withUnsafeBytes { seal(p, key: key, associatedData: $0) } }
    }

    /// Encrypts key material (for wrapping one key under another).
    package static func seal(_ plaintext: SecureBytes, key: SecureBytes, associatedData: some ContiguousBytes) -> Data {
        plaintext.withUnsafeBytes { p in associatedData.withUnsafeBytes { seal(p, key: key, associatedData: $0) } }
    }

    /// Decrypts a box made by `seal`; throws `CryptoError.authenticationFailure` on any mismatch.
    package static func open(_ box: Data, key: SecureBytes, associatedData: some ContiguousBytes) throws(CryptoError)
        -> Data
    {
        guard box.count >= overhead else { throw .truncated }
        var plaintext = Data(count: box.count - overhead)
        let ok = plaintext.withUnsafeMutableBytes { out in
            decrypt(box, into: out, key: key, associatedData: associatedData)
        }
        guard ok else { throw .authenticationFailure }
        return plaintext
    }

    /// Decrypts a wrapped key straight into a `SecureBytes`, so the plaintext key never sits in `Data`.
    package static func openKey(
        _ box: Data, key: SecureBytes, associatedData: some ContiguousBytes, lifetime: SecureBytes.Lifetime = .longLived
    ) throws(CryptoError) -> SecureBytes {
        guard box.count >= overhead else { throw .truncated }
        return try SecureBytes(count: box.count - overhead, lifetime: lifetime) { (out) throws(CryptoError) in
            guard decrypt(box, into: out, key: key, associatedData: associatedData) else {
                throw .authenticationFailure
            }
        }
    }

    private static func decrypt(
        _ box: Data, into out: UnsafeMutableRawBufferPointer, key: SecureBytes, associatedData: some ContiguousBytes
    ) -> Bool {
        precondition(key.count == keyLength, "AEAD key must be \(keyLength) bytes")
        return box.withUnsafeBytes { boxBytes in
            associatedData.withUnsafeBytes { ad in
                key.withUnsafeBytes { keyBytes in
                    Sodium.aeadDecrypt(
                        output: out, ciphertext: UnsafeRawBufferPointer(rebasing: boxBytes[nonceLength...]),
                        associatedData: ad, nonce: UnsafeRawBufferPointer(rebasing: boxBytes[0..<nonceLength]),
                        key: keyBytes)
                }
            }
        }
    }
}
