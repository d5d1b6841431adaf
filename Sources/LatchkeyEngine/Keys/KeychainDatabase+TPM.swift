import Foundation
internal import LatchkeyCrypto
internal import LatchkeyStorage
internal import LatchkeyTPM

/// How a keychain is bound to this machine's TPM, as `latchkey tpm status`, `doctor` and
/// `show-keychain-info` report it.
public struct TPMBinding: Sendable, Equatable {
    /// Where the TPM was looked for (`LATCHKEY_TPM_TCTI`, else `device:/dev/tpmrm0`).
    public var address: String
    /// Whether the keybag needs the TPM (the keychain is enrolled).
    public var enrolled: Bool
    /// Whether a TPM answered there.
    public var present: Bool
    /// For an enrolled keychain: whether the TPM that answered is the one it is sealed to (nil: no TPM).
    public var sameTPM: Bool?
    /// The TPM's dictionary-attack state, when it answered.
    public var lockout: TPMLockoutReport?
    /// Why the TPM could not be used, when it could not.
    public var problem: String?
}

/// The TPM's dictionary-attack protection as it stands.
public struct TPMLockoutReport: Sendable, Equatable {
    /// Wrong authorizations counted now.
    public var failedTries: Int
    /// Wrong authorizations after which the TPM locks out.
    public var maxTries: Int
    /// Seconds after which one counted failure is forgiven.
    public var recoveryInterval: Int
    /// Whether the TPM is in lockout now.
    public var inLockout: Bool
}

extension KeychainDatabase {
    /// Binds the keybag to this machine's TPM: from now on the keybag's key needs, besides the passphrase,
    /// a secret the TPM releases only for the right passphrase — every guess is a TPM operation counted by
    /// its dictionary-attack lockout, and a copied file cannot be attacked anywhere else. Returns the
    /// recovery code (show it once: it opens the keychain without the TPM). One transaction: a process
    /// killed meanwhile leaves the keychain as it was. `errSecAuthFailed` for a wrong passphrase;
    /// `errSecDuplicateItem` when the keychain is already enrolled.
    public func enrollTPM(passphrase: Passphrase) throws(KeychainError) -> RecoveryCode {
        guard path != nil else { throw KeychainError(.unimplemented, "an in-memory keychain cannot be bound to a TPM") }
        let meta = try readKeyMeta()
        guard meta.tpm == nil else {
            throw KeychainError(.duplicateItem, "the keychain is already bound to a TPM (latchkey tpm remove undoes it)")
        }
        let material = try Self.openKeybag(meta, passphrase: passphrase)
        let code = RecoveryCode()
        try seal(material, meta: meta, passphrase: passphrase, recoveryKeybag: recoveryKeybag(material, code: code, keychainID: meta.keychainID))
        return code
    }

    /// Unbinds the keychain from the TPM: the passphrase alone opens it again (the TPM must release its
    /// secret one last time, so the passphrase is checked by it). The recovery code is void afterwards.
    public func removeTPM(passphrase: Passphrase) throws(KeychainError) {
        let meta = try readKeyMeta()
        guard meta.tpm != nil else { throw KeychainError(.itemNotFound, "the keychain is not bound to a TPM") }
        let material = try Self.openKeybag(meta, passphrase: passphrase)
        try writeProtection(meta: meta, material: material, passphrase: passphrase, enrollment: nil, recoveryKeybag: nil)
    }

    /// Opens an enrolled keychain with its recovery code, without the TPM (the motherboard replaced, the
    /// TPM cleared), and sets `passphrase` as its passphrase. With `reenroll` it binds the keychain to the
    /// TPM that answers now and returns the new recovery code; else it leaves it protected by the passphrase
    /// alone. `errSecAuthFailed` for a wrong code.
    public func recoverTPM(code: RecoveryCode, passphrase: Passphrase, reenroll: Bool) throws(KeychainError) -> RecoveryCode? {
        guard passphrase.byteCount > 0 else { throw KeychainError.param("the passphrase must not be empty") }
        let meta = try readKeyMeta()
        guard meta.tpm != nil, let sealed = meta.recoveryKeybag else {
            throw KeychainError(.itemNotFound, "the keychain is not bound to a TPM and has no recovery code")
        }
        let material = try Self.openRecoveryKeybag(sealed, code: code, keychainID: meta.keychainID)
        guard reenroll else {
            try writeProtection(meta: meta, material: material, passphrase: passphrase, enrollment: nil, recoveryKeybag: nil)
            return nil
        }
        let fresh = RecoveryCode()
        try seal(material, meta: meta, passphrase: passphrase, recoveryKeybag: recoveryKeybag(material, code: fresh, keychainID: meta.keychainID))
        return fresh
    }

    /// Whether the keychain is bound to a TPM, and what the TPM says (no passphrase needed).
    public var tpmBinding: TPMBinding {
        get throws(KeychainError) {
            let meta = try readKeyMeta()
            var binding = TPMBinding(address: TPMAddress.current, enrolled: meta.tpm != nil, present: false)
            do {
                let connection = try TPMConnection(address: binding.address)
                defer { connection.close() }
                binding.present = true
                if let tpm = meta.tpm { binding.sameTPM = tpm.primaryName == connection.primaryName }
                let state = try connection.lockoutState()
                binding.lockout = TPMLockoutReport(
                    failedTries: state.failedTries, maxTries: state.maxTries, recoveryInterval: state.recoveryInterval,
                    inLockout: state.inLockout)
            } catch {
                binding.problem = error.detail
            }
            return binding
        }
    }

    /// Seals a fresh secret under the passphrase in the TPM that answers and writes the enrolled protection.
    func seal(
        _ material: KeyMaterial, meta: KeyMeta, passphrase: Passphrase, recoveryKeybag: Data, parameters: KDFParameters? = nil
    ) throws(KeychainError) {
        let kdf = KDFRecord.fresh(.argon2id13, parameters: parameters ?? meta.kdf.parameters)
        let root = try kdf.deriveRoot(from: passphrase)
        let secret = SecureBytes(randomCount: 32)
        let auth = TPMEnrollment.authValue(root: root)
        let enrollment = try TPMGuard.with { connection throws(TPMError) in
            TPMEnrollment(
                primaryName: connection.primaryName,
                passphraseObject: try connection.seal(secret, auth: auth, noDA: false), deviceObject: nil)
        }
        let master = MasterKey(root: TPMEnrollment.entangledRoot(root: root, secret: secret))
        try write(meta: meta, material: material, kdf: kdf, master: master, enrollment: enrollment, recoveryKeybag: recoveryKeybag)
    }

    /// Writes the passphrase-only protection (`enrollment` nil) or the given one.
    func writeProtection(
        meta: KeyMeta, material: KeyMaterial, passphrase: Passphrase, enrollment: TPMEnrollment?, recoveryKeybag: Data?
    ) throws(KeychainError) {
        let kdf = KDFRecord.fresh(.argon2id13, parameters: meta.kdf.parameters)
        let master = try kdf.deriveMasterKey(from: passphrase)
        try write(meta: meta, material: material, kdf: kdf, master: master, enrollment: enrollment, recoveryKeybag: recoveryKeybag)
    }

    /// One transaction: the key derivation, the key check, the keybag, the enrollment and the recovery keybag
    /// change together or not at all.
    private func write(
        meta: KeyMeta, material: KeyMaterial, kdf: KDFRecord, master: MasterKey, enrollment: TPMEnrollment?, recoveryKeybag: Data?
    ) throws(KeychainError) {
        let keybag = AEAD.seal(
            KeybagFormat.encodeFull(material), key: master.wrapKey,
            associatedData: Self.keybagAssociatedData(keychainID: meta.keychainID, kdf: kdf))
        try mappingStorageErrors {
            try pool.write { db in
                // Another process may have changed the passphrase or the enrollment since we read them.
                guard try MetaTable.value(.kdf, in: db) == meta.kdf.encoded() else {
                    throw KeychainError(.authFailed, "the passphrase was changed by another process meanwhile")
                }
                try MetaTable.set(.kdf, kdf.encoded(), in: db)
                try MetaTable.set(.keyCheck, master.keyCheck, in: db)
                try MetaTable.set(.keybag, keybag, in: db)
                if let enrollment {
                    try MetaTable.set(.tpmEnrollment, enrollment.encoded(), in: db)
                } else {
                    try MetaTable.remove(.tpmEnrollment, in: db)
                }
                if let recoveryKeybag {
                    try MetaTable.set(.recoveryKeybag, recoveryKeybag, in: db)
                } else {
                    try MetaTable.remove(.recoveryKeybag, in: db)
                }
            }
        }
    }

    func recoveryKeybag(_ material: KeyMaterial, code: RecoveryCode, keychainID: Data) -> Data {
        AEAD.seal(KeybagFormat.encodeFull(material), key: code.wrapKey, associatedData: Self.recoveryAssociatedData(keychainID))
    }

    static func openRecoveryKeybag(_ sealed: Data, code: RecoveryCode, keychainID: Data) throws(KeychainError) -> KeyMaterial {
        let plaintext: SecureBytes
        do {
            plaintext = try AEAD.openKey(sealed, key: code.wrapKey, associatedData: recoveryAssociatedData(keychainID))
        } catch {
            throw KeychainError(.authFailed, "the recovery code is not this keychain's")
        }
        guard let material = KeybagFormat.decodeFull(plaintext) else { throw KeychainError.decode("the recovery keybag is malformed") }
        return material
    }

    static func recoveryAssociatedData(_ keychainID: Data) -> Data { Data("latchkey/v1/recovery-keybag".utf8) + keychainID }
}
