package import FoundationEssentials
package import LatchkeyCrypto
package import LatchkeyPKI

/// The Secret Service's `dh-ietf1024-sha256-aes128-cbc-pkcs7` session key: Diffie-Hellman in the second
/// Oakley group (RFC 2409, 1024-bit MODP, generator 2), the shared value left-padded to 128 bytes, HKDF-SHA-256
/// with no salt and no info to 16 bytes, and AES-128-CBC with PKCS #7 padding and a fresh 16-byte IV per
/// secret — what libsecret, Python's secretstorage and Chromium speak first. Built on LatchkeyPKI's
/// `TransportPrimitives` (OpenSSL's modular exponentiation, HMAC-SHA-256 and AES-CBC).
package final class SecretTransport: Sendable {
    /// The algorithm's name in `OpenSession`.
    package static let algorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"

    /// RFC 2409 §6.2's prime.
    static let prime = Data(
        hexadecimal: """
            FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD\
            EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED\
            EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF
            """)

    /// This side's public value (128 bytes, big-endian): `OpenSession`'s output.
    package let publicKey: Data
    private let key: SecureBytes

    /// Answers a client's public value (big-endian, any length up to 128 bytes): `errSecParam` when it is
    /// not a usable group element.
    package convenience init(peerPublicKey: Data) throws(KeyError) {
        // A 256-bit exponent: more than twice the group's strength (about 80 bits), as RFC 3526 §8 asks, and
        // four times faster than a full-size one.
        let exponent = SecureBytes(randomCount: 32, lifetime: .transient)
        try self.init(peerPublicKey: peerPublicKey, privateExponent: exponent)
    }

    /// With a given private exponent (the known-answer tests).
    package init(peerPublicKey: Data, privateExponent: SecureBytes) throws(KeyError) {
        guard peerPublicKey.count <= Self.prime.count,
            let shared = TransportPrimitives.modularExponent(
                base: peerPublicKey, exponent: privateExponent, modulus: Self.prime)
        else { throw KeyError(.param, "the client's Diffie-Hellman public value is not an element of the group") }
        guard
            let ours = TransportPrimitives.modularExponent(
                base: Data([2]), exponent: privateExponent, modulus: Self.prime)
        else {
            throw KeyError(.param, "the Diffie-Hellman public value cannot be computed")
        }
        publicKey = ours.withUnsafeBytes { Data($0) }
        // HKDF-SHA-256, no salt (32 zero bytes), no info: PRK = HMAC(0³², Z); OKM = HMAC(PRK, 0x01)[0..<16].
        let zeros = [UInt8](repeating: 0, count: 32)
        guard
            let pseudorandom = zeros.withUnsafeBytes({ salt in
                shared.withUnsafeBytes { TransportPrimitives.hmacSHA256(key: salt, [$0]) }
            }),
            let expanded = pseudorandom.withUnsafeBytes({ prk in
                [UInt8(1)].withUnsafeBytes { TransportPrimitives.hmacSHA256(key: prk, [$0]) }
            })
        else { throw KeyError(.param, "the session key cannot be derived") }
        key = SecureBytes(count: 16) { buffer in
            expanded.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(16))) }
        }
    }

    /// Encrypts a secret for the client: its IV (the secret's `parameters`) and ciphertext.
    package func encrypt(_ plaintext: Data) throws(KeyError) -> (iv: Data, ciphertext: Data) {
        let iv = SecureRandom.bytes(16)
        guard let ciphertext = TransportPrimitives.aes128CBC(encrypt: true, key: key, iv: iv, input: plaintext) else {
            throw KeyError(.param, "the secret cannot be encrypted")
        }
        return (iv, ciphertext)
    }

    /// Decrypts a client's secret: `errSecParam` for a wrong IV length, ciphertext length or padding.
    package func decrypt(iv: Data, ciphertext: Data) throws(KeyError) -> Data {
        guard iv.count == 16, !ciphertext.isEmpty, ciphertext.count % 16 == 0,
            let plaintext = TransportPrimitives.aes128CBC(encrypt: false, key: key, iv: iv, input: ciphertext)
        else {
            throw KeyError(.param, "the secret does not decrypt with this session (its IV, length or padding is wrong)")
        }
        return plaintext
    }
}

extension Data {
    /// Bytes from hexadecimal text (whitespace ignored); empty on anything else.
    init(hexadecimal text: String) {
        let digits = text.filter { !$0.isWhitespace }
        var bytes: [UInt8] = []
        var index = digits.startIndex
        while index < digits.endIndex, let next = digits.index(index, offsetBy: 2, limitedBy: digits.endIndex),
            let byte = UInt8(digits[index..<next], radix: 16)
        {
            bytes.append(byte)
            index = next
        }
        self = bytes.count * 2 == digits.count ? Data(bytes) : Data()
    }
}
