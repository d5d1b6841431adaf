import Foundation
import LatchkeyCrypto
import LatchkeyPKI
import LatchkeyTPM
import LatchkeyTestSupport
import Testing

@testable import LatchkeyEngine

/// The policy digests Latchkey computes in software (for PCR values a signer expects, not the present ones)
/// are the ones a TPM's trial session computes.
@Suite(.dedicatedThreads) struct TPMPolicyDigestTests {
    static let measurement = Data((0..<32).map { UInt8($0) })

    @Test func thePolicyPCRDigestOfAFreshPCRIsAKnownValue() {
        // SHA-256(0³² ‖ 0000017f ‖ 00000001 000b 03 000001 ‖ SHA-256(0³²)), worked out independently.
        let digest = TPMPolicyDigest.pcr(mask: 1 << 16, values: [16: Data(repeating: 0, count: 32)])
        #expect(digest.map { Hex.encode($0) } == "bff2d58e9813f97cefc14f72ad8133bc7092d652b7c877959254af140c841f36")
        #expect(TPMPolicyDigest.pcr(mask: 1 << 16, values: [:]) == nil)
        #expect(TPMPolicyDigest.pcr(mask: 1 << 16, values: [16: Data(repeating: 0, count: 31)]) == nil)
    }

    @Test func thePolicyAuthorizeDigestIsAKnownValue() {
        let name = Data([0x00, 0x0b]) + Self.measurement
        #expect(
            Hex.encode(TPMPolicyDigest.authorize(keyName: name))
                == "17d03a77e839c2e3378a35bb45a7b7c4a764b04ec7043c0f4806c06c6509f2b9")
    }

    @Test(arguments: [1 << 7, 1 << 16, 1 << 7 | 1 << 11 | 1 << 16 | 1 << 23] as [UInt32])
    func thePolicyPCRDigestIsTheTrialSessions(_ mask: UInt32) throws {
        let tpm = try SoftwareTPM()
        try tpm.extendPCR(16, with: Self.measurement)  // Not all zeros: the values are hashed in order.
        try tpm.extendPCR(23, with: Data(repeating: 0xa5, count: 32))
        let connection = try TPMConnection(address: tpm.tcti)
        defer { connection.close() }
        let trial = try connection.startPolicySession(trial: true)
        defer { connection.end(trial) }
        try connection.policyPCR(trial, mask: mask)
        let values = try connection.readPCRs(mask: mask)
        #expect(values.count == mask.nonzeroBitCount)
        #expect(TPMPolicyDigest.pcr(mask: mask, values: values) == (try connection.policyDigest(trial)))
    }

    @Test func thePolicyAuthorizeDigestIsTheTrialSessions() throws {
        let tpm = try SoftwareTPM()
        let key = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let point = key.publicKeyData
        let connection = try TPMConnection(address: tpm.tcti)
        defer { connection.close() }
        let loaded = try connection.loadVerificationKey(x: point.dropFirst().prefix(32), y: point.suffix(32))
        defer { connection.flush(loaded) }
        #expect(loaded.name.count == 34)
        #expect(loaded.name.prefix(2) == Data([0x00, 0x0b]))
        let trial = try connection.startPolicySession(trial: true)
        defer { connection.end(trial) }
        try connection.trialAuthorize(trial, policyRef: TPMPolicyDigest.policyRef, key: loaded)
        #expect(TPMPolicyDigest.authorize(keyName: loaded.name) == (try connection.policyDigest(trial)))
    }

    @Test func theTPMAuthorizesASignedPolicyOnlyForItsValues() throws {
        let tpm = try SoftwareTPM()
        let key = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let point = key.publicKeyData
        let connection = try TPMConnection(address: tpm.tcti)
        defer { connection.close() }
        let values = try connection.readPCRs(mask: 1 << 16)
        let policy = try TPMSignedPolicy.sign(pcrValues: values, key: key)
        let loaded = try connection.loadVerificationKey(x: point.dropFirst().prefix(32), y: point.suffix(32))
        defer { connection.flush(loaded) }
        func authorize() throws(TPMError) {
            let session = try connection.startPolicySession()
            defer { connection.end(session) }
            try connection.policyPCR(session, mask: 1 << 16)
            try connection.authorize(
                session, approvedPolicy: policy.policyDigest, policyRef: TPMPolicyDigest.policyRef, key: loaded,
                digest: TPMPolicyDigest.approval(of: policy.policyDigest), r: policy.signature.prefix(32),
                s: policy.signature.suffix(32))
            let digest = try connection.policyDigest(session)
            #expect(digest == TPMPolicyDigest.authorize(keyName: loaded.name))
        }
        try authorize()
        try connection.extendPCR(16, with: Self.measurement)
        do throws(TPMError) {
            try authorize()
            Issue.record("the TPM authorized the policy for other PCR values")
        } catch {
            #expect(error.kind == .policyFailed)
            #expect(error.detail == "the PCRs do not hold the values the signed policy approves")
        }
    }

    @Test func theTPMRefusesASignatureOfAnotherKey() throws {
        let tpm = try SoftwareTPM()
        let key = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let other = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let point = key.publicKeyData
        let connection = try TPMConnection(address: tpm.tcti)
        defer { connection.close() }
        let policy = try TPMSignedPolicy.sign(pcrValues: try connection.readPCRs(mask: 1 << 16), key: other)
        let loaded = try connection.loadVerificationKey(x: point.dropFirst().prefix(32), y: point.suffix(32))
        defer { connection.flush(loaded) }
        let session = try connection.startPolicySession()
        defer { connection.end(session) }
        try connection.policyPCR(session, mask: 1 << 16)
        do throws(TPMError) {
            try connection.authorize(
                session, approvedPolicy: policy.policyDigest, policyRef: TPMPolicyDigest.policyRef, key: loaded,
                digest: TPMPolicyDigest.approval(of: policy.policyDigest), r: policy.signature.prefix(32),
                s: policy.signature.suffix(32))
            Issue.record("the TPM accepted another key's signature")
        } catch {
            #expect(error.kind == .policyFailed)
            #expect(error.detail.hasPrefix("the TPM found the policy's signature invalid for the policy key ("))
        }
    }
}
