internal import CTSS2
package import FoundationEssentials
import LatchkeyCrypto
internal import LatchkeyPOSIX

/// The PCRs: read and extended.
extension TPMConnection {
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
}
