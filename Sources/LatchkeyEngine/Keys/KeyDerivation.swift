internal import LatchkeyCrypto

/// The cost of turning a passphrase into the master key (Argon2id): memory and passes.
///
/// New keychains get `.default` (64 MiB, 3 passes). Latchkey refuses to create or open a keychain whose
/// parameters are below `.minimum` (19 MiB, 2 passes: OWASP's Argon2id floor) or above 4 GiB / 64 passes.
public struct KeyDerivation: Hashable, Sendable, CustomStringConvertible {
    /// Passes over memory (Argon2's t_cost).
    public var passes: UInt64
    /// Memory in bytes (Argon2's m_cost × 1024).
    public var memoryBytes: UInt64

    /// Creates a parameter set.
    public init(passes: UInt64, memoryBytes: UInt64) {
        self.passes = passes
        self.memoryBytes = memoryBytes
    }

    /// 64 MiB, 3 passes.
    public static let `default` = KeyDerivation(KDFParameters.default)
    /// The floor: 19 MiB, 2 passes. Fast enough for tests; weaker than the default.
    public static let minimum = KeyDerivation(KDFParameters.floor)
    /// The ceiling: 4 GiB, 64 passes (so a crafted file cannot make Latchkey allocate without bound).
    public static let maximum = KeyDerivation(KDFParameters.ceiling)

    /// Checks that both values lie between `.minimum` and `.maximum`: `errSecParam` naming the accepted
    /// range otherwise. Every front end (the command line, backups, passphrase changes) asks this one check.
    public func validate() throws(KeychainError) {
        guard parameters.isWithinBounds else {
            throw KeychainError.param(
                "key derivation \(self) is outside the accepted range (\(Self.minimum.memoryBytes >> 20) to "
                    + "\(Self.maximum.memoryBytes >> 20) MiB, \(Self.minimum.passes) to \(Self.maximum.passes) passes)")
        }
    }

    init(_ parameters: KDFParameters) {
        self.init(passes: parameters.passes, memoryBytes: parameters.memoryBytes)
    }

    var parameters: KDFParameters { KDFParameters(passes: passes, memoryBytes: memoryBytes) }

    /// `Argon2id, 64 MiB, 3 passes`.
    public var description: String { parameters.description }
}
