package import FoundationEssentials

/// Argon2id parameters: passes over memory and memory in bytes.
package struct KDFParameters: Equatable, Sendable, CustomStringConvertible {
    /// Number of passes (Argon2's t_cost; libsodium's opslimit).
    package var passes: UInt64
    /// Memory in bytes (Argon2's m_cost × 1 KiB; libsodium's memlimit).
    package var memoryBytes: UInt64

    /// Creates a parameter set.
    package init(passes: UInt64, memoryBytes: UInt64) {
        self.passes = passes
        self.memoryBytes = memoryBytes
    }

    /// What a new keychain gets: 64 MiB and 3 passes.
    package static let `default` = KDFParameters(passes: 3, memoryBytes: 64 << 20)
    /// The least Latchkey accepts when opening or creating a keychain: OWASP's Argon2id minimum
    /// (19 MiB, 2 passes). Files with weaker parameters are refused.
    package static let floor = KDFParameters(passes: 2, memoryBytes: 19 << 20)
    /// The most Latchkey accepts, so a crafted file cannot make it allocate without bound.
    package static let ceiling = KDFParameters(passes: 64, memoryBytes: 4 << 30)

    /// Whether both values lie between `floor` and `ceiling`.
    package var isWithinBounds: Bool {
        passes >= Self.floor.passes && passes <= Self.ceiling.passes
            && memoryBytes >= Self.floor.memoryBytes && memoryBytes <= Self.ceiling.memoryBytes
    }

    package var description: String { "Argon2id, \(memoryBytes >> 20) MiB, \(passes) passes" }
}

/// Derives a key from a passphrase with Argon2id (libsodium's `crypto_pwhash`, ALG_ARGON2ID13).
package enum PasswordKDF {
    /// Salt length in bytes (16).
    package static let saltLength = Sodium.pwhashSaltBytes

    /// Derives `length` bytes from `passphrase` and `salt`. Slow on purpose: call it outside any lock.
    package static func deriveKey(
        passphrase: SecureBytes, salt: Data, parameters: KDFParameters, length: Int = 32
    ) throws(CryptoError) -> SecureBytes {
        precondition(salt.count == saltLength, "Argon2id salt must be \(saltLength) bytes")
        return try SecureBytes(count: length) { (out) throws(CryptoError) in
            let ok = passphrase.withUnsafeBytes { password in
                salt.withUnsafeBytes { saltBytes in
                    Sodium.argon2id(
                        output: out, password: password, salt: saltBytes,
                        opsLimit: parameters.passes, memLimit: parameters.memoryBytes)
                }
            }
            if !ok { throw .keyDerivationFailed }
        }
    }
}
