import Foundation
import LatchkeyCrypto
import LatchkeyPKI
import LatchkeyTPM
import LatchkeyTestSupport
import Testing

/// The PCRs and the policy key as `TPMConnection` reads, extends and loads them, checked against TPM 2.0's
/// formulas computed here: an extend (Part 1 §17), TPM2_PolicyPCR over the value a PCR holds now (Part 3
/// §23.7), a key's TPM name (Part 1 §16), TPM2_PolicyAuthorize (Part 3 §23.16). The engine's software digests
/// are compared with trial sessions in LatchkeyEngineTests' `TPMPolicyDigestTests`.
@Suite struct TPMPCRAndPolicyKeyTests {
    static func sha256(_ parts: Data...) -> Data {
        let buffers = parts.map { Array($0) }
        let digest = withRawBuffers(buffers) { FormatPrimitives.sha256($0) }
        return digest.withUnsafeBytes { Data($0) }
    }

    private static func withRawBuffers<R>(_ buffers: [[UInt8]], _ body: ([UnsafeRawBufferPointer]) -> R) -> R {
        var pointers: [UnsafeRawBufferPointer] = []
        func next(_ index: Int) -> R {
            guard index < buffers.count else { return body(pointers) }
            return buffers[index].withUnsafeBytes { raw in
                pointers.append(raw)
                return next(index + 1)
            }
        }
        return next(0)
    }

    static func bigEndian32(_ value: UInt32) -> Data {
        Data([UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    }

    /// TPML_PCR_SELECTION with one SHA-256 selection of three bytes, as Latchkey selects PCRs.
    static func selection(_ mask: UInt32) -> Data {
        bigEndian32(1) + Data([0x00, 0x0B, 3, UInt8(mask & 0xFF), UInt8(mask >> 8 & 0xFF), UInt8(mask >> 16 & 0xFF)])
    }

    static func policyPCR(after old: Data, mask: UInt32, values: [Int: Data]) -> Data {
        let selected = values.keys.sorted().reduce(Data()) { $0 + values[$1]! }
        return sha256(old, bigEndian32(0x17F), selection(mask), sha256(selected))
    }

    @Test func anExtendIsTheHashOfTheOldValueAndTheDigest() throws {
        let tpm = try SoftwareTPM()
        let connection = try TPMConnection(address: tpm.tcti)
        defer { connection.close() }
        let before = try #require(try connection.readPCRs(mask: 1 << 16)[16])
        #expect(before == Data(repeating: 0, count: 32))  // PCR 16 is the debug PCR, reset at start.
        let measurement = Self.sha256(Data("a measured boot".utf8))
        try connection.extendPCR(16, with: measurement)
        let after = try #require(try connection.readPCRs(mask: 1 << 16)[16])
        #expect(after == Self.sha256(before, measurement))
        // And the policy over PCR 16 follows the value it holds now, not the one it held.
        let trial = try connection.startPolicySession(trial: true)
        defer { connection.end(trial) }
        try connection.policyPCR(trial, mask: 1 << 16)
        #expect(
            try connection.policyDigest(trial)
                == Self.policyPCR(after: Data(repeating: 0, count: 32), mask: 1 << 16, values: [16: after]))
    }

    @Test func policyAuthorizeIsPart3sFormula() throws {
        let tpm = try SoftwareTPM()
        let connection = try TPMConnection(address: tpm.tcti)
        defer { connection.close() }
        let signer = try connection.createP256Key()
        let point = signer.publicPoint
        #expect(point.count == 65 && point.first == 0x04)
        let key = try connection.loadVerificationKey(x: point[1..<33], y: point[33..<65])
        defer { connection.flush(key) }
        // A TPM name: the name algorithm (SHA-256) and the digest of the public area.
        #expect(key.name.count == 34)
        #expect(key.name.prefix(2) == Data([0x00, 0x0B]))
        let policyRef = Data("latchkey-policy".utf8)
        let trial = try connection.startPolicySession(trial: true)
        defer { connection.end(trial) }
        try connection.trialAuthorize(trial, policyRef: policyRef, key: key)
        let first = Self.sha256(Data(repeating: 0, count: 32), Self.bigEndian32(0x16A), key.name)
        #expect(try connection.policyDigest(trial) == Self.sha256(first, policyRef))
    }

    @Test func theVerificationKeyMustBe32ByteCoordinates() throws {
        let tpm = try SoftwareTPM()
        let connection = try TPMConnection(address: tpm.tcti)
        defer { connection.close() }
        #expect(throws: TPMError.self) {
            _ = try connection.loadVerificationKey(x: Data(repeating: 1, count: 31), y: Data(repeating: 1, count: 32))
        }
        do {
            _ = try connection.loadVerificationKey(x: Data(repeating: 1, count: 33), y: Data(repeating: 1, count: 32))
            Issue.record("a 33-byte coordinate was loaded")
        } catch {
            #expect(error.detail == "a P-256 public key has 32-byte coordinates")
        }
    }
}
