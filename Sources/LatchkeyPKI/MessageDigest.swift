package import FoundationEssentials

/// The SHA-1 and SHA-2 digests (OpenSSL's), for formats that name one: SSH's fingerprints (SHA-256), its
/// signatures (SHA-1 for `ssh-rsa`, SHA-256 and SHA-512 for `rsa-sha2-*`, SHA-256/384/512 for ECDSA) and
/// SSHSIG's message hashes.
package enum MessageDigest: String, Sendable, CaseIterable {
    case sha1 = "SHA1"
    case sha256 = "SHA256"
    case sha384 = "SHA384"
    case sha512 = "SHA512"

    /// The digest's length in bytes.
    package var length: Int {
        switch self {
        case .sha1: 20
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        }
    }

    /// The digest of `data`.
    package func hash(_ data: Data) -> Data {
        let digest = data.withUnsafeBytes { OpenSSL.digest(rawValue, [$0]) }
        guard let digest else { preconditionFailure("OpenSSL has no \(rawValue)") }  // Part of every OpenSSL 3 build.
        return digest
    }
}
