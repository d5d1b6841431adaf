internal import CTSS2
package import FoundationEssentials
import LatchkeyCrypto
internal import LatchkeyPOSIX

// Every raw tpm2-tss call of Latchkey (ESAPI, the TCTI loader, the marshalling library) is in the files of
// this folder, one concern each: the connection (here), sealing, policies, signed policies, PCRs, the
// lockout, keys made in the TPM, and marshalling.

/// One conversation with a TPM: the TCTI connection, the ESAPI context, the storage primary key (ECC P-256,
/// made afresh from the owner seed: the same TPM always makes the same one) and a salted HMAC session bound
/// to that primary, whose parameter encryption hides secrets and authValues from anyone on the bus.
///
/// Not `Sendable`: one operation owns it from `open` to `close`.
package final class TPMConnection {
    var tcti: OpaquePointer?
    var context: OpaquePointer?
    var primary: ESYS_TR = 0xfff
    var session: ESYS_TR = 0xfff
    /// Where the TPM was found (`swtpm:host=…,port=…`, `device:/dev/tpmrm0`).
    package let address: String
    /// The storage primary's TPM name (`nameAlg ‖ SHA-256 of its public area`): pinned in what Latchkey
    /// seals, so a different TPM (or a cleared one) is told apart from a wrong passphrase.
    package private(set) var primaryName = Data()

    /// tpm2-tss logs every failure to standard error unless TSS2_LOG says otherwise; Latchkey reports the
    /// failure itself (a user's own TSS2_LOG is kept). Set once, at the first connection.
    static let quietLogging: Void = Environment.setDefault("TSS2_LOG", "all+NONE")

    static let none: ESYS_TR = 0xfff
    static let password: ESYS_TR = 0x0ff
    static let owner: ESYS_TR = 0x101
    static let lockoutHierarchy: ESYS_TR = 0x10a

    /// Connects to the TPM at `address` and makes the primary and the session. `pinnedPrimary`, when
    /// given, must be this TPM's primary's name: else `.wrongTPM` before any secret is sent.
    package init(address: String, pinnedPrimary: Data? = nil) throws(TPMError) {
        _ = Self.quietLogging
        self.address = address
        // tpm2-tss is loaded here, on first use (Sources/CTSS2/loader.h), not by every process at start.
        if let missing = latchkey_ctss2_unavailable() {
            throw TPMError(.noTPM, address: address, detail: "tpm2-tss is not installed: \(String(cString: missing))")
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
    func flushAbandoned() throws(TPMError) {
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

    func check(_ status: TSS2_RC, _ during: String) throws(TPMError) {
        guard status == 0 else { throw TPMError(code: status, during: during, address: address) }
    }

    func makePrimary() throws(TPMError) {
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
    func startSession() throws(TPMError) {
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
}
