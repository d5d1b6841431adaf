import Foundation
internal import LatchkeyCrypto
internal import LatchkeyStorage
internal import LatchkeyTPM

extension KeychainDatabase {
    /// The PCRs an unattended unlock is sealed to (empty when there is none).
    public var unattendedPCRs: [Int] {
        get throws(KeychainError) { try readKeyMeta().tpm?.unattended?.pcrs ?? [] }
    }

    /// Seals an unattended unlock for servers to the current values of the SHA-256 PCRs `pcrs` (0 to 23), as
    /// systemd-creds and clevis do: from then on `unlockUnattended()` opens the keychain with no passphrase
    /// while those PCRs hold the same values (the same firmware, boot loader, kernel … as measured), and
    /// refuses with `errSecInteractionNotAllowed` after a change — the passphrase and the recovery code still
    /// open it. A keychain not yet bound to the TPM is enrolled first: the recovery code is returned then.
    /// Enrolling again reseals to the PCR values of now.
    public func enrollUnattended(passphrase: Passphrase, pcrs: [Int]) throws(KeychainError) -> RecoveryCode? {
        guard !pcrs.isEmpty, pcrs.allSatisfy({ (0..<24).contains($0) }) else {
            throw KeychainError.param("PCRs are numbers from 0 to 23, at least one")
        }
        let mask = pcrs.reduce(UInt32(0)) { $0 | (1 << UInt32($1)) }
        var code: RecoveryCode?
        if try readKeyMeta().tpm == nil { code = try enrollTPM(passphrase: passphrase) }
        let meta = try readKeyMeta()
        guard var enrollment = meta.tpm, enrollment != .malformed else {
            throw KeychainError.decode(
                "the TPM enrollment is malformed; the recovery code opens the keychain (latchkey tpm recover)")
        }
        let material = try Self.openKeybag(meta, passphrase: passphrase)
        let key = SecureBytes(randomCount: AEAD.keyLength)
        let object = try TPMGuard.with(pinned: enrollment.primaryName) { connection throws(TPMError) in
            let trial = try connection.startPolicySession(trial: true)
            defer { connection.end(trial) }
            try connection.policyPCR(trial, mask: mask)
            return try connection.seal(key, auth: nil, noDA: true, policy: try connection.policyDigest(trial))
        }
        enrollment.unattended = TPMUnattended(pcrMask: mask, object: object)
        let keybag = AEAD.seal(
            KeybagFormat.encodeFull(material), key: key, associatedData: Self.unattendedAssociatedData(meta.keychainID))
        try mappingStorageErrors {
            try pool.write { db in
                guard try MetaTable.value(.tpmEnrollment, in: db) == meta.tpm?.encoded() else {
                    throw KeychainError(.authFailed, "the TPM enrollment was changed by another process meanwhile")
                }
                try MetaTable.set(.tpmEnrollment, enrollment.encoded(), in: db)
                try MetaTable.set(.unattendedKeybag, keybag, in: db)
            }
        }
        return code
    }

    /// Unlocks with no passphrase through the unattended unlock: the TPM releases its key only while the
    /// PCRs hold the values they had at enrollment. `errSecInteractionNotAllowed` naming the PCRs after a
    /// change (open with the passphrase or the recovery code then); `errSecItemNotFound` when the keychain
    /// has no unattended unlock.
    public func unlockUnattended() throws(KeychainError) {
        let meta = try readKeyMeta()
        guard let tpm = meta.tpm, let unattended = tpm.unattended, let sealed = meta.unattendedKeybag else {
            throw KeychainError(
                .itemNotFound, "the keychain has no unattended unlock (latchkey tpm enroll --unattended --pcrs …)")
        }
        let key: SecureBytes
        do {
            key = try TPMGuard.with(pinned: tpm.primaryName) { connection throws(TPMError) in
                let session = try connection.startPolicySession()
                defer { connection.end(session) }
                try connection.policyPCR(session, mask: unattended.pcrMask)
                return try connection.unseal(unattended.object, policySession: session)
            }
        } catch  where error.reason == "tpm.pcrMismatch" {
            let list = unattended.pcrs.map(String.init).joined(separator: ",")
            throw KeychainError(
                .interactionNotAllowed,
                "PCR \(list) changed since the unattended unlock was sealed (a firmware, boot loader or kernel update?); the TPM refused, so open the keychain with its passphrase or recovery code and enroll --unattended again",
                reason: "tpm.pcrMismatch")
        }
        let plaintext: SecureBytes
        do {
            plaintext = try AEAD.openKey(
                sealed, key: key, associatedData: Self.unattendedAssociatedData(meta.keychainID))
        } catch {
            throw KeychainError.decode("the unattended keybag is damaged")
        }
        guard let material = KeybagFormat.decodeFull(plaintext) else {
            throw KeychainError.decode("the unattended keybag is malformed")
        }
        vault.installAll(material)
    }

    static func unattendedAssociatedData(_ keychainID: Data) -> Data {
        Data("latchkey/v1/unattended-keybag".utf8) + keychainID
    }
}
