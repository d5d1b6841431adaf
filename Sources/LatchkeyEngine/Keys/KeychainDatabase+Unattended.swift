import FoundationEssentials
internal import LatchkeyCrypto
package import LatchkeyPKI
internal import LatchkeyStorage
internal import LatchkeyTPM

extension KeychainDatabase {
    /// The PCRs an unattended unlock is sealed to (empty when there is none).
    package var unattendedPCRs: [Int] {
        get throws(KeychainError) { try readKeyMeta().tpm?.unattended?.pcrs ?? [] }
    }

    /// Seals an unattended unlock for servers to the current values of the SHA-256 PCRs `pcrs` (0 to 23), as
    /// systemd-creds and clevis do: from then on `unlockUnattended()` opens the keychain with no passphrase
    /// while those PCRs hold the same values (the same firmware, boot loader, kernel … as measured), and
    /// refuses with `errSecInteractionNotAllowed` after a change — the passphrase and the recovery code still
    /// open it. A keychain not yet bound to the TPM is enrolled first: the recovery code is returned then.
    /// Enrolling again reseals to the PCR values of now.
    ///
    /// With `policyKey` (an EC P-256 key; its public half is kept) the key is sealed under
    /// `TPM2_PolicyAuthorize` by that key instead: it opens while the PCRs hold the values of any policy the
    /// key's owner signed (`TPMSignedPolicy`) and the keychain was given (`addSignedPolicy`), so an expected
    /// firmware or kernel update needs no recovery. Enrolling again with the same key and PCRs keeps the
    /// signed policies.
    ///
    /// `settingLockoutAuthorization` as for `enrollTPM`: on a keychain enrolled already, once the passphrase
    /// has opened its keybag.
    package func enrollUnattended(
        passphrase: Passphrase, pcrs: [Int], policyKey: AsymmetricKey? = nil, settingLockoutAuthorization: Bool = false
    ) throws(KeychainError) -> TPMEnrollmentResult {
        guard !pcrs.isEmpty, pcrs.allSatisfy({ (0..<24).contains($0) }) else {
            throw KeychainError.param("PCRs are numbers from 0 to 23, at least one")
        }
        let mask = TPMPolicyDigest.mask(pcrs)
        let signer = try policyKey.map { key throws(KeychainError) in try TPMPolicyKey(key) }
        var result: TPMEnrollmentResult?
        if try readKeyMeta().tpm == nil {
            result = try enrollTPM(passphrase: passphrase, settingLockoutAuthorization: settingLockoutAuthorization)
        }
        let meta = try readKeyMeta()
        guard var enrollment = meta.tpm, enrollment != .malformed else {
            throw KeychainError.decode(
                "the TPM enrollment is malformed; the recovery code opens the keychain (latchkey tpm recover)")
        }
        let material = try Self.openKeybag(meta, passphrase: passphrase)
        let lockout: TPMLockoutAuthorization
        if let result {
            lockout = result.lockoutAuthorization
        } else {
            lockout = try TPMLockoutAuthorization.establish(
                setting: settingLockoutAuthorization, pinned: enrollment.primaryName)
        }
        let key = SecureBytes(randomCount: AEAD.keyLength)
        let object = try TPMGuard.with(pinned: enrollment.primaryName) { connection throws(TPMError) in
            let trial = try connection.startPolicySession(trial: true)
            defer { connection.end(trial) }
            if let signer {
                let loaded = try connection.loadVerificationKey(x: signer.x, y: signer.y)
                defer { connection.flush(loaded) }
                try connection.trialAuthorize(trial, policyRef: TPMPolicyDigest.policyRef, key: loaded)
            } else {
                try connection.policyPCR(trial, mask: mask)
            }
            return try connection.seal(key, auth: nil, noDA: true, policy: try connection.policyDigest(trial))
        }
        var unattended = TPMUnattended(pcrMask: mask, object: object, policyKey: signer)
        if let signer, let old = enrollment.unattended, old.policyKey == signer, old.pcrMask == mask {
            unattended.signedPolicies = old.signedPolicies
        }
        enrollment.unattended = unattended
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
        return TPMEnrollmentResult(recoveryCode: result?.recoveryCode, lockoutAuthorization: lockout)
    }

    /// Unlocks with no passphrase through the unattended unlock: the TPM releases its key only while the
    /// PCRs hold the values they had at enrollment — or, with a policy key, the values of a signed policy the
    /// keychain holds. `errSecInteractionNotAllowed` naming the PCRs after a change (open with the passphrase
    /// or the recovery code then); `errSecItemNotFound` when the keychain has no unattended unlock.
    package func unlockUnattended() throws(KeychainError) {
        let meta = try readKeyMeta()
        guard let tpm = meta.tpm, let unattended = tpm.unattended, let sealed = meta.unattendedKeybag else {
            throw KeychainError(
                .itemNotFound, "the keychain has no unattended unlock (latchkey tpm enroll --unattended --pcrs …)")
        }
        let key: SecureBytes
        if let signer = unattended.policyKey {
            key = try unsealUnderSignedPolicy(unattended, signer: signer, pinned: tpm.primaryName)
        } else {
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

    /// The unattended key sealed under TPM2_PolicyAuthorize: the signed policy whose values the PCRs hold
    /// now (computed in software from the values the TPM reports) is checked by the TPM (TPM2_VerifySignature),
    /// the session's TPM2_PolicyPCR must reach its digest, and TPM2_PolicyAuthorize turns that into the
    /// object's policy.
    private func unsealUnderSignedPolicy(_ unattended: TPMUnattended, signer: TPMPolicyKey, pinned: Data)
        throws(KeychainError) -> SecureBytes
    {
        let mask = unattended.pcrMask
        let found = try TPMGuard.with(pinned: pinned) { connection throws(TPMError) -> (SecureBytes?, [Int: Data]) in
            let values = try connection.readPCRs(mask: mask)
            let digest = TPMPolicyDigest.pcr(mask: mask, values: values)
            guard let policy = unattended.signedPolicies.last(where: { $0.policyDigest == digest }) else {
                return (nil, values)
            }
            let loaded = try connection.loadVerificationKey(x: signer.x, y: signer.y)
            defer { connection.flush(loaded) }
            let session = try connection.startPolicySession()
            defer { connection.end(session) }
            try connection.policyPCR(session, mask: mask)
            try connection.authorize(
                session, approvedPolicy: policy.policyDigest, policyRef: TPMPolicyDigest.policyRef, key: loaded,
                digest: TPMPolicyDigest.approval(of: policy.policyDigest), r: policy.signature.prefix(32),
                s: policy.signature.suffix(32))
            return (try connection.unseal(unattended.object, policySession: session), values)
        }
        if let key = found.0 { return key }
        let all = unattended.pcrs.map(String.init).joined(separator: ",")
        guard let newest = unattended.signedPolicies.last else {
            throw KeychainError(
                .interactionNotAllowed,
                "the unattended unlock needs a signed policy for PCR \(all) and the keychain holds none yet; add one (latchkey tpm add-policy FILE), or open the keychain with its passphrase or recovery code",
                reason: "tpm.pcrMismatch")
        }
        // No signed policy approves the values now: name the PCRs that differ from the newest policy's.
        let changed = unattended.pcrs.filter { newest.pcrValues[$0] != found.1[$0] }
        let list = changed.isEmpty ? all : changed.map(String.init).joined(separator: ",")
        let count = unattended.signedPolicies.count
        throw KeychainError(
            .interactionNotAllowed,
            "PCR \(list) changed and \(count == 1 ? "the signed policy" : "none of the \(count) signed policies") the keychain holds \(count == 1 ? "does not approve" : "approves") the values now (a firmware, boot loader or kernel update no policy was signed for?); open the keychain with its passphrase or recovery code, or add a policy signed for the new values (latchkey tpm add-policy FILE)",
            reason: "tpm.pcrMismatch")
    }

    /// Gives the keychain a signed PCR policy (`TPMSignedPolicy`, as `latchkey tpm sign-policy` writes it): from
    /// then on the unattended unlock opens while the PCRs hold its values. Needs no passphrase — only the policy
    /// key's owner can make one that verifies. A policy already held is kept once; past
    /// `TPMUnattended.maximumPolicies` the oldest goes. `errSecItemNotFound` when the unattended unlock takes
    /// no signed policies (enrolled without a policy key); `errSecAuthFailed` for a policy signed by another
    /// key, or whose signature does not verify; `errSecParam` for one over other PCRs than the keychain's.
    package func addSignedPolicy(_ policy: TPMSignedPolicy) throws(KeychainError) {
        let meta = try readKeyMeta()
        guard var enrollment = meta.tpm, enrollment != .malformed, var unattended = enrollment.unattended,
            let signer = unattended.policyKey
        else {
            throw KeychainError(
                .itemNotFound,
                "the keychain's unattended unlock takes no signed policies (latchkey tpm enroll --unattended --pcrs … --policy-key KEY.pem)"
            )
        }
        guard policy.keyFingerprint == signer.fingerprint else {
            throw KeychainError(
                .authFailed,
                "the policy is signed by another key (sha256:\(Hex.encode(policy.keyFingerprint))), not the keychain's policy key (sha256:\(Hex.encode(signer.fingerprint)))"
            )
        }
        guard policy.pcrMask == unattended.pcrMask else {
            throw KeychainError.param(
                "the policy covers PCR \(policy.pcrs.map(String.init).joined(separator: ",")); the keychain's unattended unlock is sealed to PCR \(unattended.pcrs.map(String.init).joined(separator: ","))"
            )
        }
        guard policy.isSigned(by: signer) else {
            throw KeychainError(.authFailed, "the policy's signature is not the policy key's (the file was altered?)")
        }
        unattended.signedPolicies.removeAll { $0.policyDigest == policy.policyDigest }
        unattended.signedPolicies.append(policy)
        unattended.signedPolicies = Array(unattended.signedPolicies.suffix(Int(TPMUnattended.maximumPolicies)))
        enrollment.unattended = unattended
        try mappingStorageErrors {
            try pool.write { db in
                guard try MetaTable.value(.tpmEnrollment, in: db) == meta.tpm?.encoded() else {
                    throw KeychainError(.authFailed, "the TPM enrollment was changed by another process meanwhile")
                }
                try MetaTable.set(.tpmEnrollment, enrollment.encoded(), in: db)
            }
        }
    }

    static func unattendedAssociatedData(_ keychainID: Data) -> Data {
        Data("latchkey/v1/unattended-keybag".utf8) + keychainID
    }
}
