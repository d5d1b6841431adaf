package import FoundationEssentials
package import LatchkeyCrypto

/// The primitives other programs' files are made of, on OpenSSL (package access), for LatchkeyFormats:
/// AES-CBC at 128 bits without padding (GNOME Keyring's keyring files) and at 256 bits with PKCS #7 padding
/// (KeePass's KDBX), KeePass's AES-KDF rounds (AES-256-ECB), MD5 (the keyring file's checksum and its
/// hashed attributes) and SHA-256, SHA-512 and HMAC-SHA-256 (KDBX's keys and blocks).
package enum FormatPrimitives {
    /// AES-CBC under a 16- or 32-byte key and a 16-byte IV, with PKCS #7 padding or (`padding` false) on whole
    /// blocks; nil for other sizes, input that is not whole blocks without padding, or a wrong padding.
    package static func aesCBC(
        encrypt: Bool, key: SecureBytes, iv: Data, input: UnsafeRawBufferPointer, padding: Bool
    ) -> SecureBytes? {
        OpenSSL.aesCBC(encrypt: encrypt, key: key, iv: iv, input: input, padding: padding)
    }

    /// `block` (32 bytes) encrypted `rounds` times with AES-256-ECB under `key` (32 bytes); nil for other sizes.
    package static func aesECBRounds(key: SecureBytes, block: SecureBytes, rounds: UInt64) -> SecureBytes? {
        OpenSSL.aesECBRounds(key: key, block: block, rounds: rounds)
    }

    /// The MD5 digest of `parts`, concatenated (16 bytes).
    package static func md5(_ parts: [UnsafeRawBufferPointer]) -> Data {
        guard let digest = OpenSSL.digest("MD5", parts) else {
            preconditionFailure("OpenSSL has no MD5")  // Part of the default provider of every OpenSSL 3 build.
        }
        return digest
    }

    /// The SHA-256 digest of `parts`, concatenated, in secure memory (it is often a key).
    package static func sha256(_ parts: [UnsafeRawBufferPointer]) -> SecureBytes { secureDigest("SHA256", parts) }

    /// The SHA-512 digest of `parts`, concatenated, in secure memory (it is often a key).
    package static func sha512(_ parts: [UnsafeRawBufferPointer]) -> SecureBytes { secureDigest("SHA512", parts) }

    private static func secureDigest(_ name: String, _ parts: [UnsafeRawBufferPointer]) -> SecureBytes {
        guard var digest = OpenSSL.digest(name, parts) else {
            preconditionFailure("OpenSSL has no \(name)")  // Part of every OpenSSL 3 build.
        }
        defer { digest.resetBytes(in: 0..<digest.count) }
        return digest.withUnsafeBytes { SecureBytes(copying: $0) }
    }

    /// HMAC-SHA-256 of `parts` under `key` (32 bytes).
    package static func hmacSHA256(key: UnsafeRawBufferPointer, _ parts: [UnsafeRawBufferPointer]) -> SecureBytes {
        guard let mac = OpenSSL.hmacSHA256(key: key, parts) else {
            preconditionFailure("OpenSSL's HMAC-SHA-256 failed")  // Only on memory exhaustion.
        }
        return mac
    }

    /// SHA-256 of `parts`, rehashed until `iterations` digests were taken (GNOME Keyring's keyring-file key).
    package static func iteratedSHA256(_ parts: [UnsafeRawBufferPointer], iterations: UInt32) -> SecureBytes? {
        OpenSSL.iteratedSHA256(parts, iterations: iterations)
    }
}
