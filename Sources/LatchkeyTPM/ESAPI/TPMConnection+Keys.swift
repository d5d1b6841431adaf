internal import CTSS2
package import FoundationEssentials
package import LatchkeyCrypto
internal import LatchkeyPOSIX

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
    static func keyObject(
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
    static func leftPadded(_ bytes: Data, to count: Int) -> Data {
        bytes.count >= count ? bytes : Data(count: count - bytes.count) + bytes
    }
}
