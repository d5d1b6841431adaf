import Foundation
import LatchkeyPKI
import LatchkeyTPM
import Testing

@testable import LatchkeyEngine

/// The `tpm-enrollment` record with a signed-policy unattended unlock (flag bit 2): it reads back as written,
/// and any cut or flipped flag reads as no record (the keychain then reports a malformed enrollment).
@Suite struct TPMEnrollmentRecordTests {
    static func record(policies: Int) throws -> TPMEnrollment {
        let key = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let signed = try (0..<policies).map { index in
            try TPMSignedPolicy.sign(
                pcrValues: [7: Data(repeating: UInt8(index), count: 32), 11: Data(repeating: 0xee, count: 32)],
                key: key)
        }
        return TPMEnrollment(
            primaryName: Data(repeating: 1, count: 34),
            passphraseObject: TPMSealedObject(public: Data([1, 2, 3]), private: Data([4, 5])),
            deviceObject: TPMSealedObject(public: Data([6]), private: Data([7])),
            unattended: TPMUnattended(
                pcrMask: 1 << 7 | 1 << 11, object: TPMSealedObject(public: Data([8, 9]), private: Data([10])),
                policyKey: try TPMPolicyKey(key), signedPolicies: signed))
    }

    @Test(arguments: [0, 1, 3])
    func itReadsBackAsWritten(_ policies: Int) throws {
        let record = try Self.record(policies: policies)
        let decoded = TPMEnrollment.decode(record.encoded())
        #expect(decoded == record)
        #expect(decoded?.unattended?.signedPolicies.count == policies)
        #expect(
            decoded?.unattended?.signedPolicies.last?.pcrValues[11]
                == (policies > 0 ? Data(repeating: 0xee, count: 32) : nil))
    }

    @Test func aCutOrAlteredRecordReadsAsNone() throws {
        let encoded = try Self.record(policies: 2).encoded()
        for length in 0..<encoded.count {
            #expect(TPMEnrollment.decode(encoded.prefix(length)) == nil, "\(length) bytes")
        }
        #expect(TPMEnrollment.decode(encoded + Data([0])) == nil)
        // The flag byte: a policy key without an unattended unlock, or an unknown flag.
        let flagOffset = 4 + 4 + 34 + 4 + 3 + 4 + 2
        #expect(encoded[flagOffset] == 7)
        for flags: UInt8 in [5, 15] {
            var altered = encoded
            altered[flagOffset] = flags
            #expect(TPMEnrollment.decode(altered) == nil, "flags \(flags)")
        }
    }
}
