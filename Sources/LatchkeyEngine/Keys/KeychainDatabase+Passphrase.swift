import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyStorage

extension KeychainDatabase {
    /// Checks the passphrase (Argon2id, deliberately slow) without changing the lock state:
    /// `errSecAuthFailed` when it is wrong.
    public func verifyPassphrase(_ passphrase: Passphrase) throws(KeychainError) {
        _ = try Self.openKeybag(try readKeyMeta(), passphrase: passphrase)
    }

    /// Changes the passphrase. Only the keybag is re-wrapped (its cost does not grow with the number of
    /// items). `keyDerivation` changes the Argon2id parameters at the same time; nil keeps them.
    /// A wrong `old` passphrase gets `errSecAuthFailed`.
    public func changePassphrase(
        from old: Passphrase, to new: Passphrase, keyDerivation: KeyDerivation? = nil
    ) throws(KeychainError) {
        guard path != nil else { throw KeychainError(.unimplemented, "an in-memory keychain has no stored passphrase") }
        guard new.byteCount > 0 else { throw KeychainError.param("the new passphrase must not be empty") }
        let meta = try readKeyMeta()
        let material = try Self.openKeybag(meta, passphrase: old)
        let parameters = keyDerivation?.parameters ?? meta.kdf.parameters
        try KeyDerivation(parameters).validate()
        if meta.tpm != nil, let recovery = meta.recoveryKeybag {
            // Enrolled: the TPM seals a fresh secret under the new passphrase; the recovery code stays.
            let device = try deviceKey(meta, material: material)
            try seal(
                material, meta: meta, passphrase: new, recoveryKeybag: recovery, deviceKey: device.key,
                deviceKeybag: device.keybag,
                parameters: parameters, keepUnattended: true)
            return
        }
        // Not enrolled: the same transaction as an enrolled keychain's (`write`, with its check that no other
        // process changed the passphrase meanwhile), every other row kept as it is.
        let kdf = KDFRecord.fresh(.argon2id13, parameters: parameters)
        try write(
            meta: meta, material: material, kdf: kdf, master: try kdf.deriveMasterKey(from: new),
            protection: Protection(
                enrollment: meta.tpm, recoveryKeybag: meta.recoveryKeybag, deviceOnlyKeybag: meta.deviceOnlyKeybag,
                deviceKeybag: nil, unattendedKeybag: meta.unattendedKeybag))
    }

    /// The Argon2id parameters the keychain uses.
    public var keyDerivation: KeyDerivation {
        get throws(KeychainError) { KeyDerivation(try readKeyMeta().kdf.parameters) }
    }
}
