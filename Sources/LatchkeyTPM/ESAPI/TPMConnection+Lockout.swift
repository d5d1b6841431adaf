internal import CTSS2
import FoundationEssentials
package import LatchkeyCrypto
internal import LatchkeyPOSIX

/// The dictionary-attack lockout, its authorization, and an orderly shutdown.
extension TPMConnection {
    /// The dictionary-attack state: failed tries counted, tries allowed, seconds per forgiven try, lockout,
    /// and whether the lockout hierarchy has an authValue (TPM_PT_PERMANENT, TPM2_CAP_TPM_PROPERTIES).
    package func lockoutState() throws(TPMError) -> TPMLockoutState {
        var more: TPMI_YES_NO = 0
        var data: UnsafeMutablePointer<TPMS_CAPABILITY_DATA>?
        try check(
            latchkey_Esys_GetCapability(
                context, Self.none, Self.none, Self.none, TPM2_CAP(6), TPM2_PT(0x200), 32, &more, &data),
            "reading the lockout state")
        defer { latchkey_Esys_Free(data) }
        guard let data else { throw TPMError(.failed, address: address, detail: "the TPM returned no properties") }
        func value(_ property: UInt32) -> UInt32 {
            var result: UInt32 = 0
            _ = latchkey_tpm_property(data, property, &result)
            return result
        }
        // TPMA_PERMANENT: bit 2 lockoutAuthSet (TPM2_HierarchyChangeAuth of the lockout hierarchy since the
        // last TPM2_Clear), bit 9 inLockout.
        let permanent = value(0x200)
        return TPMLockoutState(
            failedTries: Int(value(0x200 + 14)), maxTries: Int(value(0x200 + 15)),
            recoveryInterval: Int(value(0x200 + 16)), inLockout: permanent & 0x200 != 0,
            lockoutAuthSet: permanent & 0x4 != 0)
    }

    /// TPM2_HierarchyChangeAuth of the lockout hierarchy, authorized by its present authValue — empty: this is
    /// for a TPM whose `lockoutAuthSet` is clear — through the salted session, whose parameter encryption
    /// carries `auth` encrypted: from then on resetting the dictionary-attack counter
    /// (TPM2_DictionaryAttackLockReset), changing its parameters and TPM2_Clear through the lockout hierarchy
    /// need `auth`. One command: the TPM has the new authValue or the old one, never half of either.
    package func setLockoutAuth(_ auth: SecureBytes) throws(TPMError) {
        var value = TPM2B_AUTH()
        defer { withUnsafeMutableBytes(of: &value) { wipeBytes($0) } }
        let filled = auth.withUnsafeBytes {
            latchkey_tpm_auth(&value, $0.bindMemory(to: UInt8.self).baseAddress, $0.count)
        }
        guard filled == 0 else { throw TPMError(.failed, address: address, detail: "the authorization is too long") }
        // The response has no parameter, which the TPM refuses to encrypt (TPM_RC_ATTRIBUTES): the session
        // encrypts the command's new authValue only, for this command.
        try check(
            latchkey_Esys_TRSess_SetAttributes(context, session, TPMA_SESSION(0x20 | 0x01), 0xff),
            "setting the session's encryption")
        // Back to both ways for the next command (as after signing: a failure here is tpm2-tss's bookkeeping).
        defer { _ = latchkey_Esys_TRSess_SetAttributes(context, session, TPMA_SESSION(0x20 | 0x40 | 0x01), 0xff) }
        try check(
            latchkey_Esys_HierarchyChangeAuth(context, Self.lockoutHierarchy, session, Self.none, Self.none, &value),
            "setting the lockout authorization")
        // tpm2-tss keeps the new authValue with its lockout handle (for the response's HMAC): an empty one
        // overwrites it, so that only the TPM holds it once this returns.
        var empty = TPM2B_AUTH()
        _ = latchkey_Esys_TR_SetAuth(context, Self.lockoutHierarchy, &empty)
    }

    /// TPM2_DictionaryAttackParameters with the (empty) lockout authorization: how many failures lock the
    /// TPM out and how fast they are forgiven (tests set a small budget on their swtpm).
    package func setDictionaryAttackParameters(maxTries: Int, recoveryInterval: Int, lockoutRecovery: Int)
        throws(TPMError)
    {
        try check(
            latchkey_Esys_DictionaryAttackParameters(
                context, Self.lockoutHierarchy, Self.password, Self.none, Self.none, UInt32(maxTries),
                UInt32(recoveryInterval), UInt32(lockoutRecovery)), "setting the lockout parameters")
    }

    /// TPM2_Shutdown(CLEAR): an orderly shutdown, so the next start counts no DA failure for a power cut.
    package func shutdown() throws(TPMError) {
        try check(latchkey_Esys_Shutdown(context, Self.none, Self.none, Self.none, TPM2_SU(0)), "shutting down")
    }
}
