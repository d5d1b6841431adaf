internal import CTSS2
package import FoundationEssentials
import LatchkeyCrypto
internal import LatchkeyPOSIX

/// Policy sessions: PCR policies and their digests.
extension TPMConnection {
    /// Starts a policy session (salted to the primary) for `unseal(_:policySession:)`.
    package func startPolicySession(trial: Bool = false) throws(TPMError) -> TPMPolicySession {
        var symmetric = latchkey_tpm_session_symmetric()
        var handle: ESYS_TR = Self.none
        try check(
            latchkey_Esys_StartAuthSession(
                context, primary, Self.none, Self.none, Self.none, Self.none, nil, TPM2_SE(trial ? 0x03 : 0x01),
                &symmetric,
                TPMI_ALG_HASH(0x000b), &handle), "starting a policy session")
        return TPMPolicySession(handle: handle)
    }

    /// Ends a policy session.
    package func end(_ policySession: TPMPolicySession) {
        _ = latchkey_Esys_FlushContext(context, policySession.handle)
    }

    /// TPM2_PolicyPCR: binds the session to the SHA-256 PCRs of `mask` holding their current values.
    package func policyPCR(_ policySession: TPMPolicySession, mask: UInt32) throws(TPMError) {
        var selection = TPML_PCR_SELECTION()
        latchkey_tpm_pcr_selection(&selection, mask)
        var empty = TPM2B_DIGEST()
        try check(
            latchkey_Esys_PolicyPCR(context, policySession.handle, Self.none, Self.none, Self.none, &empty, &selection),
            "binding the policy to the PCRs")
    }

    /// The session's policy digest so far (a trial session's is what an object's authPolicy must hold).
    package func policyDigest(_ policySession: TPMPolicySession) throws(TPMError) -> Data {
        var digest: UnsafeMutablePointer<TPM2B_DIGEST>?
        try check(
            latchkey_Esys_PolicyGetDigest(context, policySession.handle, Self.none, Self.none, Self.none, &digest),
            "reading the policy digest")
        defer { latchkey_Esys_Free(digest) }
        guard let digest else { return Data() }
        return Data(bytes: latchkey_tpm_digest_bytes(digest), count: Int(digest.pointee.size))
    }
}

/// A policy session's handle, for the policy commands of one `TPMConnection`.
package struct TPMPolicySession {
    let handle: UInt32
}
