package import Foundation
import LatchkeyCrypto
package import LatchkeyPKI

/// The benchmark's floor for key operations: the same OpenSSL EVP calls Latchkey makes, with nothing around
/// them — no algorithm parsing, no checks, no result shaping (LatchkeyPKI's `RawKeyOperations`). What
/// `AsymmetricKey` cannot beat.
package struct PKIFloor: Sendable {
    let key: AsymmetricKey

    /// The floor for operations with `key`.
    package init(_ key: AsymmetricKey) { self.key = key }

    /// `EVP_DigestSign` with SHA-256 (ECDSA, or RSA PKCS #1 v1.5 when `rsa`).
    package func signSHA256(_ message: Data) -> Data? { RawKeyOperations.signSHA256(key, message) }

    /// `EVP_DigestVerify` with SHA-256.
    package func verifySHA256(_ message: Data, signature: Data) -> Bool {
        RawKeyOperations.verifySHA256(key, message, signature: signature)
    }

    /// ECIES's raw steps to a recipient on P-256: an ephemeral key, ECDH, one SHA-256 for the X9.63 KDF
    /// (32 bytes: key and IV), AES-128-GCM.
    package func eciesSeal(_ plaintext: Data, to recipient: AsymmetricKey) -> Data? {
        guard let agreement = RawKeyOperations.ephemeralP256Agreement(with: recipient) else { return nil }
        let (point, shared) = agreement
        var counter = UInt32(1).bigEndian
        guard
            let derived = shared.withUnsafeBytes({ z in
                withUnsafeBytes(of: &counter) { c in
                    point.withUnsafeBytes { info in RawKeyOperations.digest("SHA256", [z, c, info]) }
                }
            })
        else { return nil }
        let aesKey = SecureBytes(copying: [UInt8](derived.prefix(16)))
        let iv = [UInt8](derived.suffix(16))
        guard let sealed = RawKeyOperations.aesGCMSeal(key: aesKey, iv: iv, plaintext: plaintext) else { return nil }
        return point + sealed.ciphertext + sealed.tag
    }

    /// ECIES's raw steps to open what `eciesSeal` sealed to this key (a P-256 private key): load the
    /// ephemeral point, ECDH, one SHA-256, AES-128-GCM.
    package func eciesOpen(_ sealed: Data) -> Data? {
        let point = Data(sealed.prefix(65))
        guard sealed.count >= 65 + 16, let shared = RawKeyOperations.p256Agreement(key, point: point)
        else { return nil }
        var counter = UInt32(1).bigEndian
        guard
            let derived = shared.withUnsafeBytes({ z in
                withUnsafeBytes(of: &counter) { c in
                    point.withUnsafeBytes { info in RawKeyOperations.digest("SHA256", [z, c, info]) }
                }
            })
        else { return nil }
        let body = sealed.dropFirst(65)
        return RawKeyOperations.aesGCMOpen(
            key: SecureBytes(copying: [UInt8](derived.prefix(16))), iv: [UInt8](derived.suffix(16)),
            ciphertext: Data(body.dropLast(16)), tag: Data(body.suffix(16)))
    }

    /// `d2i_X509` alone: the floor for decoding a certificate.
    package static func decodeCertificate(_ der: Data) -> Bool { RawKeyOperations.parsesAsCertificate(der) }
}
