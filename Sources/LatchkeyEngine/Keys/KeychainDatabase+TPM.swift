package import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyStorage
internal import LatchkeyTPM

/// How a keychain is bound to this machine's TPM, as `latchkey tpm status`, `doctor` and
/// `show-keychain-info` report it.
package struct TPMBinding: Sendable, Equatable {
    /// Where the TPM was looked for (`LATCHKEY_TPM_TCTI`, else `device:/dev/tpmrm0`).
    package var address: String
    /// Whether the keybag needs the TPM (the keychain is enrolled).
    package var enrolled: Bool
    /// Whether the device key is sealed by the TPM (no device key file beside the keychain).
    package var deviceKeySealed: Bool = false
    /// The PCRs an unattended unlock is sealed to (empty: none).
    package var unattendedPCRs: [Int] = []
    /// With a signed-policy unattended unlock: SHA-256 of the policy key (its SubjectPublicKeyInfo DER).
    package var policyKeyFingerprint: Data?
    /// The signed policies the keychain holds, oldest first.
    package var signedPolicies: [TPMSignedPolicy] = []
    /// The values of the unattended unlock's PCRs now, when the TPM answered (which signed policy matches).
    package var pcrValuesNow: [Int: Data] = [:]
    /// Whether a TPM answered there.
    package var present: Bool = false
    /// For an enrolled keychain: whether the TPM that answered is the one it is sealed to (nil: no TPM).
    package var sameTPM: Bool?
    /// The TPM's dictionary-attack state, when it answered.
    package var lockout: TPMLockoutReport?
    /// Why the TPM could not be used, when it could not.
    package var problem: String?
}

/// The TPM's dictionary-attack protection as it stands.
package struct TPMLockoutReport: Sendable, Equatable {
    /// Wrong authorizations counted now.
    package var failedTries: Int
    /// Wrong authorizations after which the TPM locks out.
    package var maxTries: Int
    /// Seconds after which one counted failure is forgiven.
    package var recoveryInterval: Int
    /// Whether the TPM is in lockout now.
    package var inLockout: Bool
    /// Whether the TPM's lockout authorization is set (TPMA_PERMANENT's lockoutAuthSet): while it is not,
    /// anyone who can run TPM commands on the machine can reset `failedTries` (`TPMLockoutAuthorization`).
    package var lockoutAuthSet: Bool
}

extension KeychainDatabase {
    /// Binds the keybag to this machine's TPM: from now on the keybag's key needs, besides the passphrase,
    /// a secret the TPM releases only for the right passphrase — every guess is a TPM operation counted by
    /// its dictionary-attack lockout, and a copied file cannot be attacked anywhere else. The device key
    /// moves into the TPM too (sealed noDA; the device key file goes), so a copy of the home directory on
    /// another machine reads no `dk`/`dku` item and no ThisDeviceOnly item. Returns the recovery code (show
    /// it once: it opens the keychain without the TPM). One transaction: a process killed meanwhile leaves
    /// the keychain as it was. `errSecAuthFailed` for a wrong passphrase; `errSecDuplicateItem` when the
    /// keychain is already enrolled.
    ///
    /// With `settingLockoutAuthorization`, once the passphrase is checked and before anything is sealed, a
    /// TPM whose lockout authorization is empty gets a random one that is kept nowhere
    /// (`TPMLockoutAuthorization`); one someone else set is left as it is. The result says which; a TPM that
    /// refuses to set it fails the enrolment with the TPM's error, the keychain as it was.
    package func enrollTPM(passphrase: Passphrase, settingLockoutAuthorization: Bool = false) throws(KeychainError)
        -> TPMEnrollmentResult
    {
        guard let path else { throw KeychainError(.unimplemented, "an in-memory keychain cannot be bound to a TPM") }
        let meta = try readKeyMeta()
        guard meta.tpm == nil else {
            throw KeychainError(
                .duplicateItem, "the keychain is already bound to a TPM (latchkey tpm remove undoes it)")
        }
        let material = try Self.openKeybag(meta, passphrase: passphrase)
        let device = try deviceKey(meta, material: material)
        let lockout = try TPMLockoutAuthorization.establish(setting: settingLockoutAuthorization)
        let code = RecoveryCode()
        try seal(
            material, meta: meta, passphrase: passphrase,
            recoveryKeybag: recoveryKeybag(material, code: code, keychainID: meta.keychainID),
            deviceKey: device.key, deviceKeybag: device.keybag)
        removeDeviceKeyFile(path)
        return TPMEnrollmentResult(recoveryCode: code, lockoutAuthorization: lockout)
    }

    /// Unbinds the keychain from the TPM: the passphrase alone opens it again (the TPM must release its
    /// secret one last time, so the passphrase is checked by it), and the device key is a file beside the
    /// keychain again. The recovery code is void afterwards.
    package func removeTPM(passphrase: Passphrase) throws(KeychainError) {
        guard let path else { throw KeychainError(.unimplemented, "an in-memory keychain cannot be bound to a TPM") }
        let meta = try readKeyMeta()
        guard meta.tpm != nil else { throw KeychainError(.itemNotFound, "the keychain is not bound to a TPM") }
        let material = try Self.openKeybag(meta, passphrase: passphrase)
        let device = try deviceKey(meta, material: material)
        // The file first: until the commit the TPM's copy is the one used; after it, the file's.
        try DeviceKeyFile.write(
            path: DeviceKeyFile.path(forKeychain: path), keychainID: meta.keychainID, key: device.key)
        let kdf = KDFRecord.fresh(.argon2id13, parameters: meta.kdf.parameters)
        try write(
            meta: meta, material: material, kdf: kdf, master: try kdf.deriveMasterKey(from: passphrase),
            protection: Protection(deviceKeybag: device.keybag))
    }

    /// Opens an enrolled keychain with its recovery code, without the TPM (the motherboard replaced, the
    /// TPM cleared), and sets `passphrase` as its passphrase. With `reenroll` it binds the keychain to the
    /// TPM that answers now and returns the new recovery code; else it leaves it protected by the passphrase
    /// alone. ThisDeviceOnly items come back only on the machine whose TPM sealed the device key: elsewhere
    /// (or after a TPM clear) their classes get new keys and the old items stay unreadable
    /// (`errSecDecode`), as ThisDeviceOnly items never move to another device. `errSecAuthFailed` for a
    /// wrong code.
    package func recoverTPM(code: RecoveryCode, passphrase: Passphrase, reenroll: Bool) throws(KeychainError)
        -> RecoveryCode?
    {
        guard let path else { throw KeychainError(.unimplemented, "an in-memory keychain cannot be bound to a TPM") }
        guard passphrase.byteCount > 0 else { throw KeychainError.param("the passphrase must not be empty") }
        let meta = try readKeyMeta()
        guard meta.tpm != nil, let sealed = meta.recoveryKeybag else {
            throw KeychainError(.itemNotFound, "the keychain is not bound to a TPM and has no recovery code")
        }
        let recoveryPlaintext: SecureBytes
        do {
            recoveryPlaintext = try AEAD.openKey(
                sealed, key: code.wrapKey, associatedData: Self.recoveryAssociatedData(meta.keychainID))
        } catch {
            throw KeychainError(.authFailed, "the recovery code is not this keychain's")
        }
        // This machine's TPM may hold the device key (not after a clear, not on another machine). A device-only
        // keybag that does not open under it is the same as none: those classes get new keys below.
        let storedKey = try storedDeviceKey(meta)
        let deviceOnly = storedKey.flatMap { key in
            meta.deviceOnlyKeybag.flatMap { try? Self.openDeviceOnlyKeybag($0, key: key, keychainID: meta.keychainID) }
        }
        guard let (material, kept) = KeybagFormat.decodeRecovery(recoveryPlaintext, deviceOnly: deviceOnly) else {
            throw KeychainError.decode("the recovery keybag is malformed")
        }
        let deviceKey = kept ? storedKey! : SecureBytes(randomCount: AEAD.keyLength)
        let deviceKeybag = Self.deviceKeybag(material, key: deviceKey, keychainID: meta.keychainID)
        guard reenroll else {
            try DeviceKeyFile.write(
                path: DeviceKeyFile.path(forKeychain: path), keychainID: meta.keychainID, key: deviceKey)
            let kdf = KDFRecord.fresh(.argon2id13, parameters: meta.kdf.parameters)
            try write(
                meta: meta, material: material, kdf: kdf, master: try kdf.deriveMasterKey(from: passphrase),
                protection: Protection(deviceKeybag: deviceKeybag))
            return nil
        }
        let fresh = RecoveryCode()
        try seal(
            material, meta: meta, passphrase: passphrase,
            recoveryKeybag: recoveryKeybag(material, code: fresh, keychainID: meta.keychainID),
            deviceKey: deviceKey, deviceKeybag: deviceKeybag)
        removeDeviceKeyFile(path)
        return fresh
    }

    /// Whether the keychain is bound to a TPM, and what the TPM says (no passphrase needed).
    package var tpmBinding: TPMBinding {
        get throws(KeychainError) {
            let meta = try readKeyMeta()
            var binding = TPMBinding(address: TPMAddress.current, enrolled: meta.tpm != nil)
            binding.deviceKeySealed = meta.tpm?.deviceObject != nil
            binding.unattendedPCRs = meta.tpm?.unattended?.pcrs ?? []
            binding.policyKeyFingerprint = meta.tpm?.unattended?.policyKey?.fingerprint
            binding.signedPolicies = meta.tpm?.unattended?.signedPolicies ?? []
            do {
                let connection = try TPMConnection(address: binding.address)
                defer { connection.close() }
                binding.present = true
                if let tpm = meta.tpm { binding.sameTPM = tpm.primaryName == connection.primaryName }
                let state = try connection.lockoutState()
                binding.lockout = TPMLockoutReport(
                    failedTries: state.failedTries, maxTries: state.maxTries, recoveryInterval: state.recoveryInterval,
                    inLockout: state.inLockout, lockoutAuthSet: state.lockoutAuthSet)
                if let mask = meta.tpm?.unattended?.pcrMask, binding.policyKeyFingerprint != nil {
                    binding.pcrValuesNow = try connection.readPCRs(mask: mask)
                }
            } catch {
                binding.problem = error.detail
            }
            return binding
        }
    }

    /// What besides the key derivation, key check and keybag a protection writes (nil: the row goes, except
    /// `deviceKeybag`, which nil leaves as it is).
    struct Protection {
        var enrollment: TPMEnrollment?
        var recoveryKeybag: Data?
        var deviceOnlyKeybag: Data?
        var deviceKeybag: Data?
        var unattendedKeybag: Data?
    }

    /// The device key, with a new device keybag when it had to be made afresh (the file is gone or belongs
    /// to no keybag of this keychain).
    func deviceKey(_ meta: KeyMeta, material: KeyMaterial) throws(KeychainError) -> (key: SecureBytes, keybag: Data?) {
        // A device key that does not open this keychain's device keybag belongs to none: a fresh one replaces it.
        if let key = try storedDeviceKey(meta), let sealed = meta.deviceKeybag,
            (try? AEAD.openKey(
                sealed, key: key, associatedData: DeviceKeyFile.associatedData(keychainID: meta.keychainID))) != nil
        {
            return (key, nil)
        }
        let key = SecureBytes(randomCount: AEAD.keyLength)
        return (key, Self.deviceKeybag(material, key: key, keychainID: meta.keychainID))
    }

    /// Seals a fresh secret under the passphrase, and the device key, in the TPM that answers, and writes the
    /// enrolled protection.
    func seal(
        _ material: KeyMaterial, meta: KeyMeta, passphrase: Passphrase, recoveryKeybag: Data, deviceKey: SecureBytes,
        deviceKeybag: Data? = nil, parameters: KDFParameters? = nil, keepUnattended: Bool = false
    ) throws(KeychainError) {
        let kdf = KDFRecord.fresh(.argon2id13, parameters: parameters ?? meta.kdf.parameters)
        let root = try kdf.deriveRoot(from: passphrase)
        let secret = SecureBytes(randomCount: 32)
        let auth = TPMEnrollment.authValue(root: root)
        var enrollment = try TPMGuard.with { connection throws(TPMError) in
            TPMEnrollment(
                primaryName: connection.primaryName,
                passphraseObject: try connection.seal(secret, auth: auth, noDA: false),
                deviceObject: try connection.seal(deviceKey, auth: nil, noDA: true))
        }
        // A passphrase change keeps the unattended unlock (same TPM, same keys); anything else drops it.
        var unattendedKeybag: Data?
        if keepUnattended, let old = meta.tpm, old.primaryName == enrollment.primaryName,
            let unattended = old.unattended
        {
            enrollment.unattended = unattended
            unattendedKeybag = meta.unattendedKeybag
        }
        let master = MasterKey(root: TPMEnrollment.entangledRoot(root: root, secret: secret))
        let deviceOnly = AEAD.seal(
            KeybagFormat.encodeDeviceOnly(material), key: deviceKey,
            associatedData: Self.deviceOnlyAssociatedData(meta.keychainID))
        try write(
            meta: meta, material: material, kdf: kdf, master: master,
            protection: Protection(
                enrollment: enrollment, recoveryKeybag: recoveryKeybag, deviceOnlyKeybag: deviceOnly,
                deviceKeybag: deviceKeybag,
                unattendedKeybag: unattendedKeybag))
    }

    /// One transaction: the key derivation, the key check, the keybag, the enrollment and the other keybags
    /// change together or not at all.
    func write(
        meta: KeyMeta, material: KeyMaterial, kdf: KDFRecord, master: MasterKey, protection: Protection
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
                if let deviceKeybag = protection.deviceKeybag { try MetaTable.set(.deviceKeybag, deviceKeybag, in: db) }
                let rows: [(MetaTable.Name, Data?)] = [
                    (.tpmEnrollment, protection.enrollment?.encoded()), (.recoveryKeybag, protection.recoveryKeybag),
                    (.deviceOnlyKeybag, protection.deviceOnlyKeybag), (.unattendedKeybag, protection.unattendedKeybag),
                ]
                for (name, value) in rows {
                    if let value { try MetaTable.set(name, value, in: db) } else { try MetaTable.remove(name, in: db) }
                }
            }
        }
    }

    /// Removes the device key file once the TPM holds the key.
    private func removeDeviceKeyFile(_ path: String) {
        let file = DeviceKeyFile.path(forKeychain: path)
        guard FileSystem.exists(file) else { return }
        // A file left behind (a failure here) only keeps the device tier readable as before enrolling;
        // the TPM's copy is the one used from now on.
        try? FileSystem.removeFile(file)
        FileSystem.syncDirectory(URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }

    static func deviceKeybag(_ material: KeyMaterial, key: SecureBytes, keychainID: Data) -> Data {
        AEAD.seal(
            KeybagFormat.encodeDevice(material), key: key,
            associatedData: DeviceKeyFile.associatedData(keychainID: keychainID))
    }

    static func openDeviceOnlyKeybag(_ sealed: Data, key: SecureBytes, keychainID: Data) throws(CryptoError)
        -> SecureBytes
    {
        try AEAD.openKey(sealed, key: key, associatedData: deviceOnlyAssociatedData(keychainID))
    }

    static func deviceOnlyAssociatedData(_ keychainID: Data) -> Data {
        Data("latchkey/v1/device-only-keybag".utf8) + keychainID
    }

    func recoveryKeybag(_ material: KeyMaterial, code: RecoveryCode, keychainID: Data) -> Data {
        AEAD.seal(
            KeybagFormat.encodeRecovery(material), key: code.wrapKey,
            associatedData: Self.recoveryAssociatedData(keychainID))
    }

    static func recoveryAssociatedData(_ keychainID: Data) -> Data {
        Data("latchkey/v1/recovery-keybag".utf8) + keychainID
    }
}
