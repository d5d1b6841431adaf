import Foundation
internal import LatchkeyCrypto
internal import LatchkeyStorage

/// The key records of `meta`, read fresh for every unlock (another process may have changed the passphrase).
struct KeyMeta {
    let keychainID: Data
    let kdf: KDFRecord
    let keyCheck: Data
    let keybag: Data
    let deviceKeybag: Data?
}

extension KeychainDatabase {
    /// Whether the keys are available (SEMANTICS.md §4).
    public var lockState: LockState { vault.lockState }

    /// Unlocks with the passphrase: derives the master key (Argon2id, deliberately slow) and unwraps every
    /// class key. A wrong passphrase gets `errSecAuthFailed` and changes nothing, in memory or on disk; a
    /// damaged keybag gets `errSecDecode`.
    public func unlock(with passphrase: Passphrase) throws(KeychainError) {
        let meta = try readKeyMeta()
        let material = try Self.openKeybag(meta, passphrase: passphrase)
        vault.installAll(material)
    }

    /// Locks: forgets the keys of the `ak` family (`ak`, `aku`, `akpu`). `ck`-family items stay available
    /// until the keychain is closed (as on iOS until restart); `dk`-family items always.
    public func lock() { vault.lock() }

    /// Forgets every key in memory, the device tier's included (the agent does this when it exits). The
    /// handle is then as if never unlocked, without even the always-available classes.
    public func forgetAllKeys() { vault.wipeAll() }

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
        guard parameters.isWithinBounds else {
            throw KeychainError.param("key derivation \(parameters) is outside the accepted range")
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

    /// Settings stored in the file.
    public var settings: KeychainSettings {
        get throws(KeychainError) {
            let (seconds, sleep) = try mappingStorageErrors {
                try pool.read { db in (try MetaTable.value(.autoLockSeconds, in: db), try MetaTable.value(.lockOnSleep, in: db)) }
            }
            return KeychainSettings(
                autoLockAfterSeconds: seconds.flatMap { String(data: $0, encoding: .utf8) }.flatMap { Int($0) },
                lockOnSleep: sleep == Data("1".utf8))
        }
    }

    /// Stores new settings.
    public func updateSettings(_ settings: KeychainSettings) throws(KeychainError) {
        try settings.validate()
        try mappingStorageErrors {
            try pool.write { db in
                if let seconds = settings.autoLockAfterSeconds {
                    try MetaTable.set(.autoLockSeconds, Data(String(seconds).utf8), in: db)
                } else {
                    try MetaTable.remove(.autoLockSeconds, in: db)
                }
                try MetaTable.set(.lockOnSleep, Data((settings.lockOnSleep ? "1" : "0").utf8), in: db)
            }
        }
    }

    func readKeyMeta() throws(KeychainError) -> KeyMeta {
        let rows = try mappingStorageErrors { try pool.read { db in try MetaTable.all(in: db) } }
        let where_ = path ?? "in-memory keychain"
        guard let keychainID = rows[.keychainID], keychainID.count == 16,
            let kdfBytes = rows[.kdf], let kdf = KDFRecord.decode(kdfBytes),
            let keyCheck = rows[.keyCheck],
            let keybag = rows[.keybag]
        else {
            throw KeychainError(.invalidKeychain, "\(where_) is damaged: its key records are missing or malformed")
        }
        return KeyMeta(
            keychainID: keychainID, kdf: kdf, keyCheck: keyCheck, keybag: keybag,
            deviceKeybag: rows[.deviceKeybag])
    }

    static func openKeybag(_ meta: KeyMeta, passphrase: Passphrase) throws(KeychainError) -> KeyMaterial {
        let master = try meta.kdf.deriveMasterKey(from: passphrase)
        guard constantTimeEqual(master.keyCheck, meta.keyCheck) else { throw KeychainError(.authFailed) }
        let plaintext: SecureBytes
        do {
            plaintext = try AEAD.openKey(
                meta.keybag, key: master.wrapKey,
                associatedData: keybagAssociatedData(keychainID: meta.keychainID, kdf: meta.kdf))
        } catch {
            throw KeychainError.decode("the passphrase is right but the keybag is damaged")
        }
        guard let material = KeybagFormat.decodeFull(plaintext) else {
            throw KeychainError.decode("the keybag is malformed")
        }
        return material
    }

    /// Unwraps the `dk`/`dku` class keys and the index key with the device key file, when it is there and
    /// belongs to this keychain. Without it those keys arrive with the first unlock.
    func loadDeviceTier(keychainID: Data) throws(KeychainError) {
        guard let path else { return }
        let meta = try readKeyMeta()
        guard let sealed = meta.deviceKeybag,
            let deviceKey = try DeviceKeyFile.read(path: DeviceKeyFile.path(forKeychain: path), keychainID: keychainID)
        else { return }
        guard let plaintext = try? AEAD.openKey(  // A mismatched or damaged device keybag only costs the device tier.
            sealed, key: deviceKey, associatedData: DeviceKeyFile.associatedData(keychainID: keychainID)),
            let material = KeybagFormat.decodeDevice(plaintext)
        else { return }
        vault.installDeviceTier(material)
    }
}
