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
        let kdf = KDFRecord.fresh(.argon2id13, parameters: parameters)
        let master = try kdf.deriveMasterKey(from: new)
        let keybag = AEAD.seal(
            KeybagFormat.encodeFull(material), key: master.wrapKey,
            associatedData: Self.keybagAssociatedData(keychainID: meta.keychainID, kdf: kdf))
        try mappingStorageErrors {
            try pool.write { db in
                // Another process may have changed the passphrase since we read the keybag.
                guard try MetaTable.value(.kdf, in: db) == meta.kdf.encoded() else {
                    throw KeychainError(.authFailed, "the passphrase was changed by another process meanwhile")
                }
                try MetaTable.set(.kdf, kdf.encoded(), in: db)
                try MetaTable.set(.keyCheck, master.keyCheck, in: db)
                try MetaTable.set(.keybag, keybag, in: db)
            }
        }
    }

    /// The Argon2id parameters the keychain uses.
    public var keyDerivation: KeyDerivation {
        get throws(KeychainError) { KeyDerivation(try readKeyMeta().kdf.parameters) }
    }
}
