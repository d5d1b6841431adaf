internal import CTSS2
package import FoundationEssentials
import LatchkeyCrypto
internal import LatchkeyPOSIX

// MARK: - Signed PCR policies (TPM2_PolicyAuthorize; issue 35 part 3)

/// A P-256 public key loaded into the TPM (TPM2_LoadExternal, public part only, owner hierarchy) to check
/// signatures of policies: its handle on one `TPMConnection` and its TPM name (`nameAlg ‖ SHA-256 of its
/// public area`), which a PolicyAuthorize policy binds to.
package struct TPMVerificationKey {
    let handle: UInt32
    /// The key's TPM name.
    package let name: Data
}

extension TPMConnection {
    /// Loads the P-256 public key `x`, `y` (32 bytes each) for `authorize` and `trialAuthorize`. The owner
    /// hierarchy, not the null one: only a key loaded under a real hierarchy yields the verification ticket
    /// TPM2_PolicyAuthorize accepts. Flush it with `flush(_:)`.
    package func loadVerificationKey(x: Data, y: Data) throws(TPMError) -> TPMVerificationKey {
        var inPublic = TPM2B_PUBLIC()
        let built = x.withUnsafeBytes { xBytes in
            y.withUnsafeBytes { yBytes in
                latchkey_tpm_p256_verify_key(
                    &inPublic, xBytes.bindMemory(to: UInt8.self).baseAddress, xBytes.count,
                    yBytes.bindMemory(to: UInt8.self).baseAddress, yBytes.count)
            }
        }
        guard built == 0 else {
            throw TPMError(.failed, address: address, detail: "a P-256 public key has 32-byte coordinates")
        }
        var handle: ESYS_TR = Self.none
        try check(
            latchkey_Esys_LoadExternal(context, Self.none, Self.none, Self.none, nil, &inPublic, Self.owner, &handle),
            "loading the policy key")
        var name: UnsafeMutablePointer<TPM2B_NAME>?
        let named = latchkey_Esys_TR_GetName(context, handle, &name)
        defer { latchkey_Esys_Free(name) }
        guard named == 0, let name else {
            _ = latchkey_Esys_FlushContext(context, handle)
            throw TPMError(code: named, during: "reading the policy key's name", address: address)
        }
        return TPMVerificationKey(
            handle: handle, name: Data(bytes: latchkey_tpm_name_bytes(name), count: Int(name.pointee.size)))
    }

    /// Unloads a verification key.
    package func flush(_ key: TPMVerificationKey) {
        _ = latchkey_Esys_FlushContext(context, key.handle)
    }

    /// TPM2_PolicyAuthorize in a trial session: the session's digest becomes that of "any policy `key`
    /// signs with `policyRef`", which is what an object's authPolicy holds (a trial session checks no ticket).
    package func trialAuthorize(_ trial: TPMPolicySession, policyRef: Data, key: TPMVerificationKey) throws(TPMError) {
        var ticket = latchkey_tpm_null_verified_ticket()
        try policyAuthorize(trial, approvedPolicy: Data(), policyRef: policyRef, keyName: key.name, ticket: &ticket)
    }

    /// TPM2_VerifySignature of the ECDSA (SHA-256) signature `r`, `s` over SHA-256(`approvedPolicy` ‖
    /// `policyRef`) by `key`, then TPM2_PolicyAuthorize with the TPM's ticket: when the session's digest so
    /// far is `approvedPolicy` (its PolicyPCR matched the PCRs), it becomes the authorized policy's digest.
    /// A signature that does not verify: `.policyFailed` (TPM_RC_SIGNATURE, classified here).
    package func authorize(
        _ policySession: TPMPolicySession, approvedPolicy: Data, policyRef: Data, key: TPMVerificationKey,
        digest: Data, r: Data, s: Data
    ) throws(TPMError) {
        var signature = TPMT_SIGNATURE()
        let built = r.withUnsafeBytes { rBytes in
            s.withUnsafeBytes { sBytes in
                latchkey_tpm_ecdsa_signature(
                    &signature, rBytes.bindMemory(to: UInt8.self).baseAddress, rBytes.count,
                    sBytes.bindMemory(to: UInt8.self).baseAddress, sBytes.count)
            }
        }
        var signed = TPM2B_DIGEST()
        let filled = digest.withUnsafeBytes {
            latchkey_tpm_digest(&signed, $0.bindMemory(to: UInt8.self).baseAddress, $0.count)
        }
        guard built == 0, filled == 0 else {
            throw TPMError(.damaged, address: address, detail: "the policy's signature or digest has the wrong size")
        }
        var validation: UnsafeMutablePointer<TPMT_TK_VERIFIED>?
        let verified = latchkey_Esys_VerifySignature(
            context, key.handle, Self.none, Self.none, Self.none, &signed, &signature, &validation)
        defer { latchkey_Esys_Free(validation) }
        guard verified == 0, let validation else {
            // TPM_RC_SIGNATURE (parameter 2): the signature is not the key's over this digest.
            if verified & 0xbf == 0x9b {
                throw TPMError(
                    .policyFailed, address: address,
                    detail:
                        "the TPM found the policy's signature invalid for the policy key (\(Self.describe(verified)))",
                    code: verified)
            }
            throw TPMError(code: verified, during: "checking the policy's signature", address: address)
        }
        do throws(TPMError) {
            try policyAuthorize(
                policySession, approvedPolicy: approvedPolicy, policyRef: policyRef, keyName: key.name,
                ticket: validation)
        } catch  where error.kind == .damaged {
            // TPM_RC_VALUE: the session's digest (the PCRs as they are) is not the approved policy.
            throw TPMError(
                .policyFailed, address: address, detail: "the PCRs do not hold the values the signed policy approves",
                code: error.code)
        }
    }

    func policyAuthorize(
        _ policySession: TPMPolicySession, approvedPolicy: Data, policyRef: Data, keyName: Data,
        ticket: UnsafePointer<TPMT_TK_VERIFIED>
    ) throws(TPMError) {
        var approved = TPM2B_DIGEST()
        var reference = TPM2B_NONCE()
        var name = TPM2B_NAME()
        let filled =
            approvedPolicy.withUnsafeBytes {
                latchkey_tpm_digest(&approved, $0.bindMemory(to: UInt8.self).baseAddress, $0.count)
            } == 0
            && policyRef.withUnsafeBytes {
                latchkey_tpm_digest(&reference, $0.bindMemory(to: UInt8.self).baseAddress, $0.count)
            } == 0
            && keyName.withUnsafeBytes {
                latchkey_tpm_name(&name, $0.bindMemory(to: UInt8.self).baseAddress, $0.count)
            } == 0
        guard filled else {
            throw TPMError(.failed, address: address, detail: "a policy digest, reference or key name is too long")
        }
        try check(
            latchkey_Esys_PolicyAuthorize(
                context, policySession.handle, Self.none, Self.none, Self.none, &approved, &reference, &name, ticket),
            "authorizing the signed policy")
    }
}
