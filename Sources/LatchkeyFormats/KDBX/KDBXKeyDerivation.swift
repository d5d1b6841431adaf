import LatchkeyCrypto
import LatchkeyEngine
import LatchkeyPKI

/// How a KeePass database turns its composite key into the transformed key: AES-KDF (rounds of
/// AES-256-ECB under a seed, then SHA-256) or Argon2d/Argon2id, with the parameters KDBX 4 keeps in a
/// `VariantMap` (`$UUID`; `R` rounds and `S` seed; or `S` salt, `P` lanes, `M` memory in bytes, `I`
/// iterations, `V` version, optional `K` secret and `A` associated data).
package enum KDBXKeyDerivation: Sendable, Hashable {
    case aes(rounds: UInt64, seed: [UInt8])
    case argon2(Argon2, salt: [UInt8])

    static let aesKDBX3 = KDBXHeader.uuid("c9d9f39a628a4460bf740d08c18a4fea")
    static let aesKDBX4 = KDBXHeader.uuid("7c02bb8279a74ac0927d114a00648238")
    static let argon2d = KDBXHeader.uuid("ef636ddf8c29444b91f7a9a403e30a0c")
    static let argon2id = KDBXHeader.uuid("9e298b1956db4773b23dfc3ec6f0a1e6")

    init(_ map: VariantMap, what: String) throws(KeychainError) {
        let uuid = map.bytes("$UUID") ?? []
        if uuid == Self.aesKDBX3 || uuid == Self.aesKDBX4 {
            guard let rounds = map.unsigned("R"), let seed = map.bytes("S"), seed.count == 32 else {
                throw KeychainError.decode("\(what)'s AES-KDF parameters are incomplete")
            }
            self = .aes(rounds: rounds, seed: seed)
            return
        }
        guard uuid == Self.argon2d || uuid == Self.argon2id else {
            throw KeychainError.decode("\(what) asks for an unknown key derivation function")
        }
        guard let salt = map.bytes("S"), let lanes = map.unsigned("P"), let memory = map.unsigned("M"),
            let iterations = map.unsigned("I"), let version = map.unsigned("V")
        else { throw KeychainError.decode("\(what)'s Argon2 parameters are incomplete") }
        guard map.bytes("K")?.isEmpty ?? true, map.bytes("A")?.isEmpty ?? true else {
            throw KeychainError.decode(
                "\(what)'s Argon2 asks for a secret key or associated data, which KeePass never sets")
        }
        guard version == 0x10 || version == 0x13 else {
            throw KeychainError.decode("\(what) asks for Argon2 version \(version)")
        }
        // Sizes beyond 32 bits are refused here; the limits (KDBXLimits) bound the cost below that.
        guard lanes <= UInt32.max, memory / 1024 <= UInt32.max, iterations <= UInt32.max else {
            throw KeychainError.param("\(what)'s Argon2 parameters are out of range")
        }
        self = .argon2(
            Argon2(
                variant: uuid == Self.argon2d ? .d : .id, version: version == 0x10 ? .v10 : .v13,
                iterations: UInt32(iterations), memoryKiB: UInt32(memory / 1024), parallelism: UInt32(lanes)),
            salt: salt)
    }

    /// The parameters as KDBX 4 writes them.
    package var variantMap: VariantMap {
        var map = VariantMap()
        switch self {
        case .aes(let rounds, let seed):
            map["$UUID"] = .bytes(Self.aesKDBX3)  // As KeePassXC writes it, for other readers.
            map["R"] = .uint64(rounds)
            map["S"] = .bytes(seed)
        case .argon2(let argon2, let salt):
            map["$UUID"] = .bytes(argon2.variant == .d ? Self.argon2d : Self.argon2id)
            map["V"] = .uint32(argon2.version.rawValue)
            map["P"] = .uint32(argon2.parallelism)
            map["M"] = .uint64(UInt64(argon2.memoryKiB) * 1024)
            map["I"] = .uint64(UInt64(argon2.iterations))
            map["S"] = .bytes(salt)
        }
        return map
    }

    /// "Argon2d, 64 MiB, 10 iterations, 2 lanes".
    package var description: String {
        switch self {
        case .aes(let rounds, _): "AES-KDF, \(rounds) rounds"
        case .argon2(let argon2, _):
            "Argon2\(argon2.variant == .d ? "d" : "id"), \(argon2.memoryKiB >> 10) MiB, \(argon2.iterations) iterations, \(argon2.parallelism) lanes"
        }
    }

    /// Refuses a derivation that costs more than `limits` allow (`errSecParam`, naming the cost and the limit).
    func check(_ limits: KDBXLimits, what: String) throws(KeychainError) {
        let refused = "\(what) asks for a key derivation of \(description)"
        switch self {
        case .aes(let rounds, _):
            guard rounds <= limits.aesRounds else {
                throw KeychainError.param("\(refused); at most \(limits.aesRounds) AES-KDF rounds are derived")
            }
        case .argon2(let argon2, _):
            let memory = UInt64(argon2.memoryKiB) << 10
            guard memory <= limits.argon2Memory else {
                throw KeychainError.param(
                    "\(refused); at most \(limits.argon2Memory >> 20) MiB of Argon2 memory are derived")
            }
            guard UInt64(argon2.iterations) <= limits.argon2Iterations,
                memory / (1 << 20) * UInt64(argon2.iterations) <= limits.argon2Work >> 20
            else {
                throw KeychainError.param(
                    "\(refused); at most \(limits.argon2Iterations) iterations and \(limits.argon2Work >> 30) GiB of memory over all iterations are derived"
                )
            }
            guard argon2.parallelism <= limits.argon2Lanes else {
                throw KeychainError.param("\(refused); at most \(limits.argon2Lanes) lanes are derived")
            }
        }
    }

    /// The transformed key (32 bytes) of the composite key.
    func transform(_ composite: SecureBytes) throws(KeychainError) -> SecureBytes {
        switch self {
        case .aes(let rounds, let seed):
            guard
                let encrypted = FormatPrimitives.aesECBRounds(
                    key: SecureBytes(copying: seed), block: composite, rounds: rounds)
            else { throw KeychainError(.internal, "AES-KDF failed in OpenSSL") }
            return encrypted.withUnsafeBytes { FormatPrimitives.sha256([$0]) }
        case .argon2(let argon2, let salt):
            var failure: KeychainError?
            let derived: SecureBytes? = composite.withUnsafeBytes { password in
                salt.withUnsafeBytes { salt in
                    do throws(KeychainError) {
                        return try argon2.derive(password: password, salt: salt)
                    } catch {
                        failure = error
                        return nil
                    }
                }
            }
            guard let derived else { throw failure ?? KeychainError(.internal, "Argon2 failed") }
            return derived
        }
    }
}

/// How costly a key derivation a database may ask for: without these bounds a crafted file could tie up
/// gigabytes of memory for minutes. The defaults take a few seconds at most on a current machine and admit
/// what KeePassXC writes (64 MiB and its benchmark's iterations; AES-KDF rounds for one second);
/// `--allow-expensive-kdf` lifts them to `relaxed`.
package struct KDBXLimits: Sendable, Hashable {
    package var argon2Memory: UInt64
    package var argon2Iterations: UInt64
    /// Memory times iterations.
    package var argon2Work: UInt64
    package var argon2Lanes: UInt32
    package var aesRounds: UInt64

    package init(
        argon2Memory: UInt64, argon2Iterations: UInt64, argon2Work: UInt64, argon2Lanes: UInt32, aesRounds: UInt64
    ) {
        self.argon2Memory = argon2Memory
        self.argon2Iterations = argon2Iterations
        self.argon2Work = argon2Work
        self.argon2Lanes = argon2Lanes
        self.aesRounds = aesRounds
    }

    package static let `default` = KDBXLimits(
        argon2Memory: 1 << 30, argon2Iterations: 1_000, argon2Work: 16 << 30, argon2Lanes: 64, aesRounds: 100_000_000)
    package static let relaxed = KDBXLimits(
        argon2Memory: 4 << 30, argon2Iterations: 100_000, argon2Work: 256 << 30, argon2Lanes: 1 << 16,
        aesRounds: 10_000_000_000)
}
