import Foundation
import LatchkeyPKI
import Testing

/// Certificates made by Python's `cryptography` (Tests/Tools/make-certificates.py) decode to the attributes
/// that generator computed independently: serial octets, normalized names, key hash, key identifier, dates,
/// and Apple's summary, common names and e-mail addresses.
@Suite struct CertificateTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/certificates")

    struct Expected: Decodable {
        let ctyp: Int
        let slnr: String
        let issr: String
        let subj: String
        let pkhh: String
        let skid: String?
        let notValidBefore: Int
        let notValidAfter: Int
        let summary: String?
        let commonNames: [String]
        let emails: [String]
    }

    static func expectations() throws -> [String: Expected] {
        try JSONDecoder().decode(
            [String: Expected].self, from: Data(contentsOf: directory.appendingPathComponent("expected.json")))
    }

    static func fixture(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    static func hex(_ data: Data?) -> String? { data.map { $0.map { String(format: "%02x", $0) }.joined() } }

    @Test(arguments: [
        "root-rsa.der", "intermediate-ec384.der", "leaf-ec256.der", "email-only.der", "two-names.der",
        "dns-only.der", "expired.der",
    ])
    func decodesAsTheIndependentGeneratorSays(_ name: String) throws {
        let expected = try #require(try Self.expectations()[name])
        let certificate = try Certificate(derRepresentation: Self.fixture(name))
        #expect(certificate.certificateType == expected.ctyp)
        #expect(certificate.certificateEncoding == 3)
        #expect(Self.hex(certificate.serialNumber) == expected.slnr)
        #expect(Self.hex(certificate.normalizedIssuer) == expected.issr)
        #expect(Self.hex(certificate.normalizedSubject) == expected.subj)
        #expect(Self.hex(certificate.publicKeyHash) == expected.pkhh)
        #expect(Self.hex(certificate.subjectKeyID) == expected.skid)
        #expect(certificate.notValidBefore == Date(timeIntervalSince1970: TimeInterval(expected.notValidBefore)))
        #expect(certificate.notValidAfter == Date(timeIntervalSince1970: TimeInterval(expected.notValidAfter)))
        #expect(certificate.subjectSummary == expected.summary)
        #expect(certificate.commonNames == expected.commonNames)
        #expect(certificate.emailAddresses == expected.emails)
        #expect(certificate.derRepresentation == (try Self.fixture(name)))
    }

    @Test func aSelfSignedRootHasItsOwnNameAsIssuer() throws {
        let root = try Certificate(derRepresentation: Self.fixture("root-rsa.der"))
        #expect(root.normalizedIssuer == root.normalizedSubject)
        #expect(root.issuerSequence == root.subjectSequence)
        let intermediate = try Certificate(derRepresentation: Self.fixture("intermediate-ec384.der"))
        #expect(intermediate.normalizedIssuer == root.normalizedSubject)
        #expect(intermediate.normalizedIssuerSequence.first == 0x30)
        #expect(intermediate.normalizedIssuerSequence.dropFirst(2) == intermediate.normalizedIssuer)
    }

    @Test func validityIsInclusiveAtBothEnds() throws {
        let leaf = try Certificate(derRepresentation: Self.fixture("leaf-ec256.der"))
        #expect(leaf.isValid(on: leaf.notValidBefore))
        #expect(leaf.isValid(on: leaf.notValidAfter))
        #expect(!leaf.isValid(on: leaf.notValidBefore.addingTimeInterval(-1)))
        #expect(!leaf.isValid(on: leaf.notValidAfter.addingTimeInterval(1)))
    }

    @Test func theDescriptionNamesTheSubjectOnly() throws {
        let der = try Self.fixture("leaf-ec256.der")
        let leaf = try Certificate(derRepresentation: der)
        #expect(leaf.description == "Certificate(\"www.example.com\", \(der.count) bytes)")
    }

    @Test func badInputIsRefusedWithAReason() throws {
        let leaf = try Self.fixture("leaf-ec256.der")
        func reason(_ bytes: Data) -> String? {
            do {
                _ = try Certificate(derRepresentation: bytes)
                return nil
            } catch {
                return error.reason
            }
        }
        #expect(reason(Data()) == "the certificate is empty")
        #expect(reason(Data("not a certificate".utf8)) == "the data is not a DER-encoded X.509 certificate")
        #expect(reason(leaf.prefix(leaf.count - 1)) == "the data is not a DER-encoded X.509 certificate")
        #expect(reason(leaf + Data([0])) == "the data is not a DER-encoded X.509 certificate")
        #expect(
            reason(Data(count: Certificate.maximumBytes + 1))
                == "the certificate is 1048577 bytes; the limit is 1048576")
        // Every truncation and every single-byte change of a real certificate is decoded or refused, never a crash.
        for length in 0..<leaf.count { _ = reason(leaf.prefix(length)) }
        for index in 0..<leaf.count {
            var changed = leaf
            changed[index] ^= 0xFF
            _ = reason(changed)
        }
    }
}
