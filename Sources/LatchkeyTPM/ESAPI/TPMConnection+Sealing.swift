internal import CTSS2
package import FoundationEssentials
package import LatchkeyCrypto
internal import LatchkeyPOSIX

/// Sealing secrets under the storage primary, and unsealing them.
extension TPMConnection {
    /// Seals `secret` (at most 128 bytes) under the primary: the TPM's wrapped object (public and private
    /// parts, marshalled), which only this TPM can load. `auth` becomes its authValue; `noDA` exempts it from
    /// dictionary-attack lockout (for objects that need no passphrase); `policy` (a SHA-256 policy digest)
    /// makes it usable only through that policy.
    package func seal(_ secret: SecureBytes, auth: SecureBytes?, noDA: Bool, policy: Data? = nil) throws(TPMError)
        -> TPMSealedObject
    {
        var template = TPM2B_PUBLIC()
        let templateStatus: Int32 =
            if let policy {
                policy.withUnsafeBytes {
                    latchkey_tpm_seal_template(
                        &template, noDA ? 1 : 0, $0.bindMemory(to: UInt8.self).baseAddress, $0.count)
                }
            } else {
                latchkey_tpm_seal_template(&template, noDA ? 1 : 0, nil, 0)
            }
        guard templateStatus == 0 else {
            throw TPMError(.failed, address: address, detail: "the policy digest is too long")
        }
        var sensitive = TPM2B_SENSITIVE_CREATE()
        defer { withUnsafeMutableBytes(of: &sensitive) { wipeBytes($0) } }
        let filled = secret.withUnsafeBytes { data in
            (auth ?? SecureBytes(copying: [])).withUnsafeBytes { authBytes in
                latchkey_tpm_sensitive(
                    &sensitive, authBytes.bindMemory(to: UInt8.self).baseAddress, authBytes.count,
                    data.bindMemory(to: UInt8.self).baseAddress, data.count)
            }
        }
        guard filled == 0 else {
            throw TPMError(.failed, address: address, detail: "the secret or its authorization is too long to seal")
        }
        return try create(&sensitive, &template, during: "sealing") {
            (outPublic, outPrivate) throws(TPMError) -> TPMSealedObject in
            TPMSealedObject(public: try Self.marshal(outPublic), private: try Self.marshal(outPrivate))
        }
    }

    /// `TPM2_Create` of `template` with `sensitive` under the storage primary, through the salted session:
    /// `body` reads the new object's public and private areas before tpm2-tss's copies of them are freed.
    func create<Made>(
        _ sensitive: inout TPM2B_SENSITIVE_CREATE, _ template: inout TPM2B_PUBLIC, during: String,
        _ body: (UnsafeMutablePointer<TPM2B_PUBLIC>, UnsafeMutablePointer<TPM2B_PRIVATE>) throws(TPMError) -> Made
    ) throws(TPMError) -> Made {
        var outside = TPM2B_DATA()
        var pcrs = TPML_PCR_SELECTION()
        var outPrivate: UnsafeMutablePointer<TPM2B_PRIVATE>?
        var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
        var creationData: UnsafeMutablePointer<TPM2B_CREATION_DATA>?
        var creationHash: UnsafeMutablePointer<TPM2B_DIGEST>?
        var ticket: UnsafeMutablePointer<TPMT_TK_CREATION>?
        let status = latchkey_Esys_Create(
            context, primary, session, Self.none, Self.none, &sensitive, &template, &outside, &pcrs,
            &outPrivate, &outPublic, &creationData, &creationHash, &ticket)
        defer {
            latchkey_Esys_Free(outPrivate)
            latchkey_Esys_Free(outPublic)
            latchkey_Esys_Free(creationData)
            latchkey_Esys_Free(creationHash)
            latchkey_Esys_Free(ticket)
        }
        try check(status, during)
        guard let outPrivate, let outPublic else {
            throw TPMError(.failed, address: address, detail: "the TPM returned no object (\(during))")
        }
        return try body(outPublic, outPrivate)
    }

    /// Loads `object` and unseals it with `auth` as its authValue (through the salted session, so the
    /// answer travels encrypted). A wrong `auth` on a DA-protected object counts toward lockout: `.authFailed`.
    package func unseal(_ object: TPMSealedObject, auth: SecureBytes?) throws(TPMError) -> SecureBytes {
        let handle = try load(object)
        defer { _ = latchkey_Esys_FlushContext(context, handle) }
        try setAuth(handle, auth)
        return try unsealLoaded(handle, session: session)
    }

    /// Loads `object` and unseals it through the policy session `policySession` satisfied by the caller.
    package func unseal(_ object: TPMSealedObject, policySession: TPMPolicySession) throws(TPMError) -> SecureBytes {
        let handle = try load(object)
        defer { _ = latchkey_Esys_FlushContext(context, handle) }
        return try unsealLoaded(handle, session: policySession.handle)
    }

    func unsealLoaded(_ handle: ESYS_TR, session authSession: ESYS_TR) throws(TPMError) -> SecureBytes {
        var data: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
        // A policy session carries no encryption of its own: the salted session encrypts the answer.
        let extra = authSession == session ? Self.none : session
        try check(latchkey_Esys_Unseal(context, handle, authSession, extra, Self.none, &data), "unsealing")
        guard let data else { throw TPMError(.failed, address: address, detail: "the TPM returned no data") }
        defer {
            withUnsafeMutableBytes(of: &data.pointee) { wipeBytes($0) }
            latchkey_Esys_Free(data)
        }
        return SecureBytes(
            copying: UnsafeRawBufferPointer(
                start: latchkey_tpm_sensitive_data_bytes(data), count: Int(data.pointee.size)))
    }

    func setAuth(_ handle: ESYS_TR, _ auth: SecureBytes?) throws(TPMError) {
        var value = TPM2B_AUTH()
        defer { withUnsafeMutableBytes(of: &value) { wipeBytes($0) } }
        let filled = (auth ?? SecureBytes(copying: [])).withUnsafeBytes {
            latchkey_tpm_auth(&value, $0.bindMemory(to: UInt8.self).baseAddress, $0.count)
        }
        guard filled == 0 else { throw TPMError(.failed, address: address, detail: "the authorization is too long") }
        try check(latchkey_Esys_TR_SetAuth(context, handle, &value), "setting the authorization")
    }

    func load(_ object: TPMSealedObject) throws(TPMError) -> ESYS_TR {
        var inPublic = TPM2B_PUBLIC()
        var inPrivate = TPM2B_PRIVATE()
        guard Self.unmarshal(object.public, into: &inPublic), Self.unmarshal(object.private, into: &inPrivate) else {
            throw TPMError(.damaged, address: address, detail: "the sealed object is malformed")
        }
        var handle: ESYS_TR = Self.none
        do throws(TPMError) {
            try check(
                latchkey_Esys_Load(context, primary, session, Self.none, Self.none, &inPrivate, &inPublic, &handle),
                "loading the sealed object")
        } catch  where error.kind == .wrongTPM || error.kind == .failed {
            // The storage key is the pinned one, so an object it refuses (integrity, or any other check) was altered.
            throw TPMError(
                .damaged, address: address,
                detail: "\(error.detail); the sealed object does not match this TPM's storage key", code: error.code)
        }
        return handle
    }
}
