package import FoundationEssentials
package import LatchkeyCrypto

/// The primitives a protocol's own session encryption is built from, on OpenSSL (package access): finite-field
/// Diffie-Hellman, HMAC-SHA-256 (HKDF's extract and expand) and AES-128-CBC with PKCS #7 padding — what
/// LatchkeySecretService's `SecretTransport` (the Secret Service's `dh-ietf1024-sha256-aes128-cbc-pkcs7`
/// session) makes its keys and ciphertexts with.
package enum TransportPrimitives {
    /// `base` ^ `exponent` mod `modulus` (all big-endian), in constant time for the secret exponent, padded
    /// on the left to the modulus's length; nil when `base` is not in 2…modulus − 2 (a peer's public value
    /// of 0, 1 or p − 1 would give away the result).
    package static func modularExponent(base: Data, exponent: SecureBytes, modulus: Data) -> SecureBytes? {
        OpenSSL.modularExponent(base: base, exponent: exponent, modulus: modulus)
    }

    /// HMAC-SHA-256 of `parts` under `key`.
    package static func hmacSHA256(key: UnsafeRawBufferPointer, _ parts: [UnsafeRawBufferPointer]) -> SecureBytes? {
        OpenSSL.hmacSHA256(key: key, parts)
    }

    /// AES-128-CBC with PKCS #7 padding; nil when the key or IV is not 16 bytes, or a decryption's padding
    /// is wrong.
    package static func aes128CBC(encrypt: Bool, key: SecureBytes, iv: Data, input: Data) -> Data? {
        OpenSSL.aes128CBC(encrypt: encrypt, key: key, iv: iv, input: input)
    }
}
