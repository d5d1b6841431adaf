import FoundationEssentials
internal import LatchkeyCrypto

/// How the master key is derived from the passphrase, as stored in the file: algorithm, parameters, salt.
struct KDFRecord: Equatable, Sendable {
    enum Algorithm: UInt8, Sendable {
        /// For in-memory keychains only: one keyed BLAKE2b, no work factor. Refused in files.
        case memoryOnly = 0
        /// Argon2id v1.3 (libsodium's `crypto_pwhash_ALG_ARGON2ID13`).
        case argon2id13 = 1
    }

    var algorithm: Algorithm
    var parameters: KDFParameters
    var salt: Data

    static func fresh(_ algorithm: Algorithm, parameters: KDFParameters) -> KDFRecord {
        KDFRecord(algorithm: algorithm, parameters: parameters, salt: SecureRandom.bytes(PasswordKDF.saltLength))
    }

    /// `algorithm (1) ‖ passes (8) ‖ memory bytes (8) ‖ salt (16)`.
    func encoded() -> Data {
        var writer = ByteWriter(capacity: 33)
        writer.append(algorithm.rawValue)
        writer.append(parameters.passes)
        writer.append(parameters.memoryBytes)
        writer.appendRaw(salt)
        return writer.data
    }

    static func decode(_ data: Data) -> KDFRecord? {
        data.withUnsafeBytes { buffer in decode(ByteReader(buffer)) }
    }

    private static func decode(_ start: ByteReader) -> KDFRecord? {
        var reader = start
        do {
            guard let algorithm = Algorithm(rawValue: try reader.readByte()) else { return nil }
            let passes = try reader.readUInt64()
            let memory = try reader.readUInt64()
            let salt = try reader.readRaw(PasswordKDF.saltLength)
            guard reader.isAtEnd else { return nil }
            return KDFRecord(
                algorithm: algorithm, parameters: KDFParameters(passes: passes, memoryBytes: memory), salt: salt)
        } catch {
            return nil  // A short record is reported by the caller as a damaged keychain.
        }
    }

    /// Derives the master key. Slow for Argon2id by design: never call it while holding a lock.
    func deriveMasterKey(from passphrase: Passphrase) throws(KeychainError) -> MasterKey {
        MasterKey(root: try deriveRoot(from: passphrase))
    }

    /// The Argon2id output itself (what `MasterKey` and, for a TPM-enrolled keychain, the TPM authorization
    /// are derived from). Slow by design.
    func deriveRoot(from passphrase: Passphrase) throws(KeychainError) -> SecureBytes {
        let root: SecureBytes
        switch algorithm {
        case .argon2id13:
            do {
                root = try PasswordKDF.deriveKey(passphrase: passphrase.bytes, salt: salt, parameters: parameters)
            } catch {
                throw KeychainError(.allocate, "Argon2id could not allocate \(parameters.memoryBytes >> 20) MiB")
            }
        case .memoryOnly:
            let saltKey = salt.withUnsafeBytes { SecureBytes(copying: $0) }
            root = KeyedDigest.secureDigest(of: passphrase.bytes, key: saltKey)
        }
        return root
    }
}

/// The key derived from the passphrase. It never encrypts anything itself; two subkeys do the work.
struct MasterKey {
    /// Seals and opens the passphrase keybag.
    let wrapKey: SecureBytes
    /// A value stored in the file that tells a wrong passphrase apart from a damaged keybag.
    let keyCheck: Data

    init(root: SecureBytes) {
        wrapKey = KeyedDigest.subkey(of: root, label: "latchkey/v1/keybag-wrap")
        let checkKey = KeyedDigest.subkey(of: root, label: "latchkey/v1/key-check")
        keyCheck = KeyedDigest.digest(Data("latchkey/v1/key-check-value".utf8), key: checkKey)
    }
}
