/// Failures of the cryptographic layer. Descriptions never include key material or plaintext.
package enum CryptoError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A ciphertext did not authenticate: wrong key, wrong associated data, or damaged bytes.
    case authenticationFailure
    /// A sealed box is shorter than a nonce and a tag.
    case truncated
    /// Argon2id could not run with these parameters (usually: not enough memory).
    case keyDerivationFailed

    package var description: String {
        switch self {
        case .authenticationFailure: "authentication failure"
        case .truncated: "sealed data is truncated"
        case .keyDerivationFailed: "key derivation failed (Argon2id could not allocate its memory)"
        }
    }
}
