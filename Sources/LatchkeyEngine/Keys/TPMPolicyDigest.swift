package import FoundationEssentials
internal import LatchkeyPKI

/// TPM 2.0 policy digests computed in software (SHA-256 bank, TPM 2.0 Library Part 3's PolicyUpdate): what a
/// TPM's trial session would compute, for PCR values that are *expected* rather than present — a signer
/// approves the values a firmware or kernel update will measure before the machine boots it.
package enum TPMPolicyDigest {
    /// The `policyRef` Latchkey's signed PCR policies carry: it is part of what the signer signs, so a
    /// signature a key made for another purpose (systemd's PCR signatures use an empty one) authorizes
    /// nothing here.
    package static let policyRef = Data("latchkey/v1/pcr-policy".utf8)

    private static let policyPCRCode: UInt32 = 0x0000_017F  // TPM_CC_PolicyPCR
    private static let policyAuthorizeCode: UInt32 = 0x0000_016A  // TPM_CC_PolicyAuthorize

    /// The digest of a fresh session after TPM2_PolicyPCR over the SHA-256 PCRs of `mask` holding `values`
    /// (by PCR index; every PCR of the mask has one): SHA-256(32 zero bytes ‖ TPM_CC_PolicyPCR ‖ the marshalled
    /// TPML_PCR_SELECTION ‖ SHA-256(the values concatenated in ascending PCR order)). nil when a value is
    /// missing or not 32 bytes.
    package static func pcr(mask: UInt32, values: [Int: Data]) -> Data? {
        var concatenated = Data()
        for index in pcrs(mask) {
            guard let value = values[index], value.count == 32 else { return nil }
            concatenated += value
        }
        var message = Data(repeating: 0, count: 32)
        message += bigEndian(policyPCRCode)
        message += selection(mask)
        message += MessageDigest.sha256.hash(concatenated)
        return MessageDigest.sha256.hash(message)
    }

    /// The digest of a fresh session after TPM2_PolicyAuthorize by the key named `keyName`: SHA-256(
    /// SHA-256(32 zero bytes ‖ TPM_CC_PolicyAuthorize ‖ keyName) ‖ policyRef) — what the sealed object's
    /// authPolicy holds.
    package static func authorize(keyName: Data, policyRef: Data = policyRef) -> Data {
        let first = MessageDigest.sha256.hash(Data(repeating: 0, count: 32) + bigEndian(policyAuthorizeCode) + keyName)
        return MessageDigest.sha256.hash(first + policyRef)
    }

    /// What the signer signs (ECDSA over this SHA-256 digest): aHash = SHA-256(approvedPolicy ‖ policyRef).
    package static func approval(of approvedPolicy: Data, policyRef: Data = policyRef) -> Data {
        MessageDigest.sha256.hash(approvedPolicy + policyRef)
    }

    /// The marshalled TPML_PCR_SELECTION of one SHA-256 bank: count 1, TPM_ALG_SHA256, three select bytes.
    static func selection(_ mask: UInt32) -> Data {
        bigEndian(UInt32(1))
            + Data([0x00, 0x0b, 3, UInt8(mask & 0xff), UInt8((mask >> 8) & 0xff), UInt8(mask >> 16 & 0xff)])
    }

    /// The PCR numbers of `mask`, ascending.
    package static func pcrs(_ mask: UInt32) -> [Int] { (0..<24).filter { mask & (1 << UInt32($0)) != 0 } }

    /// The mask of PCR numbers (each 0 to 23).
    package static func mask(_ pcrs: some Sequence<Int>) -> UInt32 { pcrs.reduce(0) { $0 | (1 << UInt32($1)) } }

    private static func bigEndian(_ value: UInt32) -> Data { withUnsafeBytes(of: value.bigEndian) { Data($0) } }
}
