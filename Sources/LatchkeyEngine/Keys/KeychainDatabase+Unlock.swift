import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyStorage
internal import LatchkeyTPM

/// The key records of `meta`, read fresh for every unlock (another process may have changed the passphrase).
struct KeyMeta {
    let keychainID: Data
    let kdf: KDFRecord
    let keyCheck: Data
    let keybag: Data
    let deviceKeybag: Data?
    /// The TPM enrollment, when the keybag also needs the TPM.
    let tpm: TPMEnrollment?
    /// The keybag under the recovery code's key (with an enrollment).
    let recoveryKeybag: Data?
    /// The ThisDeviceOnly class keys under the device key (with an enrollment).
    let deviceOnlyKeybag: Data?
    /// The keybag under the unattended key (with an unattended enrollment).
    let unattendedKeybag: Data?
}

extension KeychainDatabase {
    /// Whether the keys are available (docs/SEMANTICS.md §4).
    public var lockState: LockState { vault.lockState }

    /// The lock state and a count of the locks since the keychain was opened: what was allowed while unlocked
    /// (an SSH key's approval) holds only while both are as they were — one lock ends it.
    package var lockStateAndEpoch: (state: LockState, epoch: Int) { vault.lockStateAndEpoch }

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
    package func forgetAllKeys() { vault.wipeAll() }

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
        // A malformed enrollment does not stop the keychain from opening: the recovery code still works.
        let tpm = rows[.tpmEnrollment].map { TPMEnrollment.decode($0) ?? .malformed }
        return KeyMeta(
            keychainID: keychainID, kdf: kdf, keyCheck: keyCheck, keybag: keybag,
            deviceKeybag: rows[.deviceKeybag], tpm: tpm, recoveryKeybag: rows[.recoveryKeybag],
            deviceOnlyKeybag: rows[.deviceOnlyKeybag], unattendedKeybag: rows[.unattendedKeybag])
    }

    /// Opens the keybag with the passphrase — and, for a TPM-enrolled keychain, the secret the TPM releases
    /// only for the right passphrase (each wrong one counted against its lockout).
    static func openKeybag(_ meta: KeyMeta, passphrase: Passphrase) throws(KeychainError) -> KeyMaterial {
        if meta.tpm == .malformed { throw malformedEnrollment }  // Before the derivation's cost.
        return try openKeybag(meta, root: try meta.kdf.deriveRoot(from: passphrase))
    }

    /// Opens the keybag with the derivation's output (`KDFRecord.deriveRoot`): the passphrase's path after
    /// Argon2id, and the whole path of a `DerivedUnlockKey`.
    static func openKeybag(_ meta: KeyMeta, root: SecureBytes) throws(KeychainError) -> KeyMaterial {
        guard let tpm = meta.tpm else { return try openKeybag(meta, master: MasterKey(root: root)) }
        guard tpm != .malformed else { throw malformedEnrollment }
        let secret = try TPMGuard.unsealPassphraseSecret(tpm, root: root)
        return try openKeybag(meta, master: MasterKey(root: TPMEnrollment.entangledRoot(root: root, secret: secret)))
    }

    private static var malformedEnrollment: KeychainError {
        KeychainError.decode(
            "the TPM enrollment is malformed; the recovery code opens the keychain (latchkey tpm recover)")
    }

    static func openKeybag(_ meta: KeyMeta, master: MasterKey) throws(KeychainError) -> KeyMaterial {
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

    /// Unwraps the `dk`/`dku` class keys and the index key with the device key — the TPM's, for an enrolled
    /// keychain, else the device key file — when it is there and belongs to this keychain. Without it those
    /// keys arrive with the first unlock.
    func loadDeviceTier(keychainID: Data) throws(KeychainError) {
        guard path != nil else { return }
        let meta = try readKeyMeta()
        guard let sealed = meta.deviceKeybag, let deviceKey = try storedDeviceKey(meta) else { return }
        guard
            let plaintext = try? AEAD.openKey(  // A mismatched or damaged device keybag only costs the device tier.
                sealed, key: deviceKey, associatedData: DeviceKeyFile.associatedData(keychainID: keychainID)),
            let material = KeybagFormat.decodeDevice(plaintext)
        else { return }
        vault.installDeviceTier(material)
    }

    /// The device key as stored: unsealed by the TPM (noDA, no authorization) for an enrolled keychain whose
    /// device key moved there, else read from the device key file. nil when it cannot be had (no file; no
    /// TPM, or another one): the device tier then waits for the first unlock.
    func storedDeviceKey(_ meta: KeyMeta) throws(KeychainError) -> SecureBytes? {
        guard let path else { return nil }
        if let tpm = meta.tpm {
            guard let object = tpm.deviceObject else { return nil }  // A malformed enrollment: no device key.
            do {
                return try TPMGuard.with(pinned: tpm.primaryName) { connection throws(TPMError) in
                    try connection.unseal(object, auth: nil)
                }
            } catch {
                return nil  // Without this machine's TPM the device tier is simply not available (see above).
            }
        }
        return try DeviceKeyFile.read(path: DeviceKeyFile.path(forKeychain: path), keychainID: meta.keychainID)
    }
}
