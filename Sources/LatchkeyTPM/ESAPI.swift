internal import CTSS2
package import FoundationEssentials
package import LatchkeyCrypto
internal import LatchkeyPOSIX

// Every raw tpm2-tss call of Latchkey (ESAPI, the TCTI loader, the marshalling library) is in this file.

/// One conversation with a TPM: the TCTI connection, the ESAPI context, the storage primary key (ECC P-256,
/// made afresh from the owner seed: the same TPM always makes the same one) and a salted HMAC session bound
/// to that primary, whose parameter encryption hides secrets and authValues from anyone on the bus.
///
/// Not `Sendable`: one operation owns it from `open` to `close`.
package final class TPMConnection {
    private var tcti: OpaquePointer?
    private var context: OpaquePointer?
    private var primary: ESYS_TR = 0xfff
    private var session: ESYS_TR = 0xfff
    /// Where the TPM was found (`swtpm:host=…,port=…`, `device:/dev/tpmrm0`).
    package let address: String
    /// The storage primary's TPM name (`nameAlg ‖ SHA-256 of its public area`): pinned in what Latchkey
    /// seals, so a different TPM (or a cleared one) is told apart from a wrong passphrase.
    package private(set) var primaryName = Data()

    /// tpm2-tss logs every failure to standard error unless TSS2_LOG says otherwise; Latchkey reports the
    /// failure itself (a user's own TSS2_LOG is kept). Set once, at the first connection.
    private static let quietLogging: Void = Environment.setDefault("TSS2_LOG", "all+NONE")

    private static let none: ESYS_TR = 0xfff
    private static let password: ESYS_TR = 0x0ff
    private static let owner: ESYS_TR = 0x101
    private static let lockoutHierarchy: ESYS_TR = 0x10a

    /// Connects to the TPM at `address` and makes the primary and the session. `pinnedPrimary`, when
    /// given, must be this TPM's primary's name: else `.wrongTPM` before any secret is sent.
    package init(address: String, pinnedPrimary: Data? = nil) throws(TPMError) {
        _ = Self.quietLogging
        self.address = address
        // tpm2-tss is loaded here, on first use (Sources/CTSS2/loader.h), not by every process at start.
        if let missing = latchkey_tss2_missing() {
            throw TPMError(
                .noTPM, address: address,
                detail: "tpm2-tss is not installed (\(String(cString: missing)) cannot be loaded)")
        }
        var loaded: OpaquePointer?
        let loadStatus = address.withCString { latchkey_Tss2_TctiLdr_Initialize($0, &loaded) }
        guard loadStatus == 0, let loaded else {
            throw TPMError(code: loadStatus, during: "connecting to \(address)", address: address)
        }
        tcti = loaded
        // tpm2-tss opens its sockets (or the device) without close-on-exec: a child started meanwhile (a
        // pinentry of the agent's, a test's next process) would keep the connection alive after `close`, and a
        // TPM without a resource manager, serving one connection at a time, would then wait for it forever.
        var descriptors = [Int32](repeating: -1, count: 8)
        let count = latchkey_tpm_descriptors(loaded, &descriptors, descriptors.count)
        for fd in descriptors.prefix(max(0, Int(count))) where fd >= 0 { FileDescriptor(rawValue: fd).setCloseOnExec() }
        var esys: OpaquePointer?
        let initStatus = latchkey_Esys_Initialize(&esys, loaded, nil)
        guard initStatus == 0, let esys else {
            close()
            throw TPMError(code: initStatus, during: "starting ESAPI", address: address)
        }
        context = esys
        do throws(TPMError) {
            try flushAbandoned()
            try makePrimary()
            if let pinnedPrimary, pinnedPrimary != primaryName { throw TPMError(.wrongTPM, address: address) }
            try startSession()
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Flushes what this connection loaded and closes it. Safe to call twice.
    package func close() {
        if let context {
            if session != Self.none { _ = latchkey_Esys_FlushContext(context, session) }
            if primary != Self.none { _ = latchkey_Esys_FlushContext(context, primary) }
            var esys: OpaquePointer? = context
            latchkey_Esys_Finalize(&esys)
        }
        context = nil
        session = Self.none
        primary = Self.none
        if tcti != nil { latchkey_Tss2_TctiLdr_Finalize(&tcti) }
        tcti = nil
    }

    /// A TPM without a resource manager (swtpm's socket, `/dev/tpm0`) serves one connection at a time and
    /// keeps what a connection left loaded — a killed process's primary and sessions — until the TPM runs out
    /// of room (TPM_RC_OBJECT_MEMORY). Whatever is loaded when a connection starts is such a leftover, so it is
    /// flushed first. Through the kernel's resource manager (`/dev/tpmrm0`) a connection sees only its own
    /// handles, so there is nothing to flush.
    private func flushAbandoned() throws(TPMError) {
        var own: Set<UInt32> = []
        for handle in [primary, session] where handle != Self.none {
            var tpmHandle: TPM2_HANDLE = 0
            if latchkey_Esys_TR_GetTpmHandle(context, handle, &tpmHandle) == 0 { own.insert(tpmHandle) }
        }
        for first: UInt32 in [0x8000_0000, 0x0200_0000, 0x0300_0000] {  // transient objects, HMAC and policy sessions
            var more: TPMI_YES_NO = 0
            var data: UnsafeMutablePointer<TPMS_CAPABILITY_DATA>?
            try check(
                latchkey_Esys_GetCapability(
                    context, Self.none, Self.none, Self.none, TPM2_CAP(1), first, 64, &more, &data),
                "listing loaded handles")
            guard let data else { continue }
            defer { latchkey_Esys_Free(data) }
            for index in 0..<latchkey_tpm_handle_count(data) where !own.contains(latchkey_tpm_handle(data, index)) {
                var handle: ESYS_TR = Self.none
                guard
                    latchkey_Esys_TR_FromTPMPublic(
                        context, latchkey_tpm_handle(data, index), Self.none, Self.none, Self.none, &handle) == 0
                else { continue }
                let flushed = latchkey_Esys_FlushContext(context, handle)
                // One that is already gone is nothing to flush; a TPM that is gone is the failure to report.
                if flushed != 0, TPMError.kind(of: flushed) == .noTPM {
                    try check(flushed, "flushing an abandoned handle")
                }
            }
        }
    }

    private func check(_ status: TSS2_RC, _ during: String) throws(TPMError) {
        guard status == 0 else { throw TPMError(code: status, during: during, address: address) }
    }

    private func makePrimary() throws(TPMError) {
        var template = TPM2B_PUBLIC()
        latchkey_tpm_primary_template(&template)
        var sensitive = TPM2B_SENSITIVE_CREATE()
        _ = latchkey_tpm_sensitive(&sensitive, nil, 0, nil, 0)
        var outside = TPM2B_DATA()
        var pcrs = TPML_PCR_SELECTION()
        var handle: ESYS_TR = Self.none
        var outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>?
        var creationData: UnsafeMutablePointer<TPM2B_CREATION_DATA>?
        var creationHash: UnsafeMutablePointer<TPM2B_DIGEST>?
        var ticket: UnsafeMutablePointer<TPMT_TK_CREATION>?
        let status = latchkey_Esys_CreatePrimary(
            context, Self.owner, Self.password, Self.none, Self.none, &sensitive, &template, &outside, &pcrs,
            &handle, &outPublic, &creationData, &creationHash, &ticket)
        latchkey_Esys_Free(outPublic)
        latchkey_Esys_Free(creationData)
        latchkey_Esys_Free(creationHash)
        latchkey_Esys_Free(ticket)
        try check(status, "making the storage key")
        primary = handle
        var name: UnsafeMutablePointer<TPM2B_NAME>?
        try check(latchkey_Esys_TR_GetName(context, handle, &name), "reading the storage key's name")
        defer { latchkey_Esys_Free(name) }
        guard let name else { throw TPMError(.failed, address: address, detail: "the storage key has no name") }
        primaryName = Data(bytes: latchkey_tpm_name_bytes(name), count: Int(name.pointee.size))
    }

    /// A salted HMAC session (the salt encrypted to the pinned primary) with parameter encryption both ways.
    private func startSession() throws(TPMError) {
        var symmetric = latchkey_tpm_session_symmetric()
        var handle: ESYS_TR = Self.none
        try check(
            latchkey_Esys_StartAuthSession(
                context, primary, Self.none, Self.none, Self.none, Self.none, nil, TPM2_SE(0x00), &symmetric,
                TPMI_ALG_HASH(0x000b), &handle), "starting a salted session")
        session = handle
        let attributes = TPMA_SESSION(0x20 | 0x40 | 0x01)  // decrypt | encrypt | continueSession
        try check(
            latchkey_Esys_TRSess_SetAttributes(context, handle, attributes, 0xff), "setting the session's encryption")
    }

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
    private func create<Made>(
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

    private func unsealLoaded(_ handle: ESYS_TR, session authSession: ESYS_TR) throws(TPMError) -> SecureBytes {
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

    private func setAuth(_ handle: ESYS_TR, _ auth: SecureBytes?) throws(TPMError) {
        var value = TPM2B_AUTH()
        defer { withUnsafeMutableBytes(of: &value) { wipeBytes($0) } }
        let filled = (auth ?? SecureBytes(copying: [])).withUnsafeBytes {
            latchkey_tpm_auth(&value, $0.bindMemory(to: UInt8.self).baseAddress, $0.count)
        }
        guard filled == 0 else { throw TPMError(.failed, address: address, detail: "the authorization is too long") }
        try check(latchkey_Esys_TR_SetAuth(context, handle, &value), "setting the authorization")
    }

    private func load(_ object: TPMSealedObject) throws(TPMError) -> ESYS_TR {
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

    // MARK: Policies

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

    // MARK: PCRs, lockout, shutdown

    /// The SHA-256 bank's values of the PCRs in `mask`, by index.
    package func readPCRs(mask: UInt32) throws(TPMError) -> [Int: Data] {
        var selection = TPML_PCR_SELECTION()
        latchkey_tpm_pcr_selection(&selection, mask)
        var counter: UInt32 = 0
        var outSelection: UnsafeMutablePointer<TPML_PCR_SELECTION>?
        var values: UnsafeMutablePointer<TPML_DIGEST>?
        try check(
            latchkey_Esys_PCR_Read(
                context, Self.none, Self.none, Self.none, &selection, &counter, &outSelection, &values),
            "reading the PCRs")
        defer {
            latchkey_Esys_Free(outSelection)
            latchkey_Esys_Free(values)
        }
        var result: [Int: Data] = [:]
        guard let values else { return result }
        let indices = (0..<24).filter { mask & (1 << UInt32($0)) != 0 }
        withUnsafeBytes(of: &values.pointee.digests) { raw in
            let digests = raw.bindMemory(to: TPM2B_DIGEST.self)
            for (position, index) in indices.enumerated() where position < Int(values.pointee.count) {
                var digest = digests[position]
                result[index] = withUnsafeBytes(of: &digest.buffer) { Data($0.prefix(Int(digest.size))) }
            }
        }
        return result
    }

    /// TPM2_PCR_Extend of PCR `index`'s SHA-256 bank with `digest` (32 bytes) — what a measured boot does.
    package func extendPCR(_ index: Int, with digest: Data) throws(TPMError) {
        var values = TPML_DIGEST_VALUES()
        values.count = 1
        values.digests.0.hashAlg = 0x000b
        withUnsafeMutableBytes(of: &values.digests.0.digest) { raw in
            digest.prefix(32).withUnsafeBytes { raw.copyMemory(from: $0) }
        }
        try check(
            latchkey_Esys_PCR_Extend(context, ESYS_TR(index), Self.password, Self.none, Self.none, &values),
            "extending PCR \(index)")
    }

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

    // MARK: Marshalling

    private static func marshal(_ value: UnsafePointer<TPM2B_PUBLIC>) throws(TPMError) -> Data {
        var buffer = [UInt8](repeating: 0, count: MemoryLayout<TPM2B_PUBLIC>.size)
        var offset = 0
        guard latchkey_Tss2_MU_TPM2B_PUBLIC_Marshal(value, &buffer, buffer.count, &offset) == 0 else {
            throw TPMError(.failed, address: "", detail: "the public area could not be marshalled")
        }
        return Data(buffer.prefix(offset))
    }

    private static func marshal(_ value: UnsafePointer<TPM2B_PRIVATE>) throws(TPMError) -> Data {
        var buffer = [UInt8](repeating: 0, count: MemoryLayout<TPM2B_PRIVATE>.size)
        var offset = 0
        guard latchkey_Tss2_MU_TPM2B_PRIVATE_Marshal(value, &buffer, buffer.count, &offset) == 0 else {
            throw TPMError(.failed, address: "", detail: "the private area could not be marshalled")
        }
        return Data(buffer.prefix(offset))
    }

    private static func unmarshal(_ data: Data, into value: inout TPM2B_PUBLIC) -> Bool {
        var offset = 0
        let bytes = [UInt8](data)
        return latchkey_Tss2_MU_TPM2B_PUBLIC_Unmarshal(bytes, bytes.count, &offset, &value) == 0
            && offset == bytes.count
    }

    private static func unmarshal(_ data: Data, into value: inout TPM2B_PRIVATE) -> Bool {
        var offset = 0
        let bytes = [UInt8](data)
        return latchkey_Tss2_MU_TPM2B_PRIVATE_Unmarshal(bytes, bytes.count, &offset, &value) == 0
            && offset == bytes.count
    }

    /// tpm2-tss's own words for a response code (`tpm:session(1):the authorization HMAC check failed…`).
    static func describe(_ code: UInt32) -> String {
        guard let text = latchkey_Tss2_RC_Decode(code) else {
            let digits = String(code, radix: 16)
            return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
        }
        return String(cString: text)
    }
}

/// A policy session's handle, for the policy commands of one `TPMConnection`.
package struct TPMPolicySession {
    let handle: UInt32
}

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

    private func policyAuthorize(
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

// MARK: - Keys made in the TPM (issue 35 part 4)

extension TPMConnection {
    /// Makes an ECC NIST P-256 key inside the TPM under the storage primary (`TPM2_Create`): unrestricted,
    /// for signing and ECDH (sign|decrypt, no scheme of its own), fixedTPM|fixedParent, generated inside
    /// (sensitiveDataOrigin), with an empty authValue and noDA — it needs no passphrase: what keeps its blob
    /// from others is the keychain's encryption of the item that holds it. Its private part leaves the TPM
    /// only encrypted to this TPM's storage key.
    package func createP256Key() throws(TPMError) -> TPMKeyObject {
        var template = TPM2B_PUBLIC()
        latchkey_tpm_p256_key_template(&template)
        var sensitive = TPM2B_SENSITIVE_CREATE()
        _ = latchkey_tpm_sensitive(&sensitive, nil, 0, nil, 0)
        return try create(&sensitive, &template, during: "making a P-256 key") {
            (outPublic, outPrivate) throws(TPMError) -> TPMKeyObject in
            try Self.keyObject(outPublic, outPrivate, address: address)
        }
    }

    /// A new key's wrapped blob and its public point (`0x04 ‖ x ‖ y`, each 32 bytes).
    private static func keyObject(
        _ outPublic: UnsafeMutablePointer<TPM2B_PUBLIC>, _ outPrivate: UnsafeMutablePointer<TPM2B_PRIVATE>,
        address: String
    ) throws(TPMError) -> TPMKeyObject {
        var x: UnsafePointer<UInt8>?
        var y: UnsafePointer<UInt8>?
        var xLength = 0
        var yLength = 0
        guard latchkey_tpm_ecc_public_point(outPublic, &x, &xLength, &y, &yLength) == 0, let x, let y,
            xLength <= 32, yLength <= 32
        else { throw TPMError(.failed, address: address, detail: "the TPM's new key has no P-256 point") }
        let point =
            Data([0x04]) + leftPadded(Data(bytes: x, count: xLength), to: 32)
            + leftPadded(Data(bytes: y, count: yLength), to: 32)
        return TPMKeyObject(
            object: TPMSealedObject(public: try marshal(outPublic), private: try marshal(outPrivate)),
            publicPoint: point)
    }

    /// ECDSA of a 32-byte digest with the key `key` (`TPM2_Sign`, ECDSA/SHA-256, no ticket: the key is
    /// unrestricted): r and s, 32 bytes each. Loads the key, signs and flushes it.
    package func signP256(_ key: TPMSealedObject, digest: Data) throws(TPMError) -> (r: Data, s: Data) {
        var inDigest = TPM2B_DIGEST()
        guard digest.count == 32,
            digest.withUnsafeBytes({
                latchkey_tpm_digest(&inDigest, $0.bindMemory(to: UInt8.self).baseAddress, $0.count)
            }) == 0
        else { throw TPMError(.failed, address: address, detail: "a P-256 signature is of a 32-byte digest") }
        var scheme = TPMT_SIG_SCHEME()
        var validation = TPMT_TK_HASHCHECK()
        latchkey_tpm_ecdsa_sha256(&scheme, &validation)
        let handle = try load(key)
        defer { _ = latchkey_Esys_FlushContext(context, handle) }
        // TPM2_Sign's response starts with no sized buffer, which the TPM refuses to encrypt
        // (TPM_RC_ATTRIBUTES): the session encrypts the command's digest only, for this command.
        try check(
            latchkey_Esys_TRSess_SetAttributes(context, session, TPMA_SESSION(0x20 | 0x01), 0xff),
            "setting the session's encryption")
        // Back to both ways for the next command; a failure here is tpm2-tss's bookkeeping of a local
        // attribute, and a later command that needs the response encrypted fails on its own if it stuck.
        defer { _ = latchkey_Esys_TRSess_SetAttributes(context, session, TPMA_SESSION(0x20 | 0x40 | 0x01), 0xff) }
        var signature: UnsafeMutablePointer<TPMT_SIGNATURE>?
        try check(
            latchkey_Esys_Sign(
                context, handle, session, Self.none, Self.none, &inDigest, &scheme, &validation, &signature),
            "signing")
        defer { latchkey_Esys_Free(signature) }
        var r: UnsafePointer<UInt8>?
        var s: UnsafePointer<UInt8>?
        var rLength = 0
        var sLength = 0
        guard let signature, latchkey_tpm_ecdsa_signature_parts(signature, &r, &rLength, &s, &sLength) == 0, let r,
            let s,
            rLength <= 32, sLength <= 32
        else { throw TPMError(.failed, address: address, detail: "the TPM returned no ECDSA signature") }
        return (
            Self.leftPadded(Data(bytes: r, count: rLength), to: 32),
            Self.leftPadded(Data(bytes: s, count: sLength), to: 32)
        )
    }

    /// ECDH of the key `key` with a peer's P-256 point (`TPM2_ECDH_ZGen`): the shared point's x coordinate,
    /// 32 bytes, which travels encrypted by the salted session. Loads the key, derives and flushes it.
    package func ecdhP256(_ key: TPMSealedObject, peerX: Data, peerY: Data) throws(TPMError) -> SecureBytes {
        var inPoint = TPM2B_ECC_POINT()
        let built = peerX.withUnsafeBytes { x in
            peerY.withUnsafeBytes { y in
                latchkey_tpm_ecc_point(
                    &inPoint, x.bindMemory(to: UInt8.self).baseAddress, x.count,
                    y.bindMemory(to: UInt8.self).baseAddress,
                    y.count)
            }
        }
        guard built == 0 else { throw TPMError(.failed, address: address, detail: "the peer's point is too long") }
        let handle = try load(key)
        defer { _ = latchkey_Esys_FlushContext(context, handle) }
        var outPoint: UnsafeMutablePointer<TPM2B_ECC_POINT>?
        try check(
            latchkey_Esys_ECDH_ZGen(context, handle, session, Self.none, Self.none, &inPoint, &outPoint),
            "deriving the shared secret")
        guard let outPoint else { throw TPMError(.failed, address: address, detail: "the TPM returned no point") }
        defer {
            withUnsafeMutableBytes(of: &outPoint.pointee) { wipeBytes($0) }
            latchkey_Esys_Free(outPoint)
        }
        var length = 0
        let x = latchkey_tpm_ecc_point_x(outPoint, &length)
        guard let x, length <= 32 else {
            throw TPMError(.failed, address: address, detail: "the TPM's shared point is not on P-256")
        }
        var padded = [UInt8](repeating: 0, count: 32)
        padded.withUnsafeMutableBytes { raw in
            raw.baseAddress!.advanced(by: 32 - length).copyMemory(from: x, byteCount: length)
        }
        defer { padded.withUnsafeMutableBytes { wipeBytes($0) } }
        return SecureBytes(copying: padded)
    }

    /// `bytes` with leading zeros up to `count` (the TPM may drop an integer's leading zero bytes).
    private static func leftPadded(_ bytes: Data, to count: Int) -> Data {
        bytes.count >= count ? bytes : Data(count: count - bytes.count) + bytes
    }
}
