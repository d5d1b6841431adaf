import Foundation
import LatchkeyCrypto
import Testing

@testable import LatchkeyPKI

/// Project Wycheproof's known-answer and edge-case vectors (Tests/Fixtures/wycheproof, Apache-2.0): every
/// "valid" vector is accepted, every "invalid" one refused; "acceptable" ones may go either way.
@Suite struct WycheproofTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/wycheproof")

    struct File: Decodable {
        let numberOfTests: Int
        let testGroups: [Group]
    }

    struct Group: Decodable {
        let publicKey: PublicKey?
        let publicKeyAsn: String?
        let privateKeyPkcs8: String?
        let curve: String?
        let tests: [Vector]
    }

    struct PublicKey: Decodable {
        let uncompressed: String?
    }

    struct Vector: Decodable {
        let tcId: Int
        let msg: String?
        let sig: String?
        let ct: String?
        let label: String?
        let `public`: String?
        let `private`: String?
        let shared: String?
        let result: String
    }

    static func load(_ name: String) throws -> File {
        try JSONDecoder().decode(File.self, from: Data(contentsOf: directory.appendingPathComponent(name + ".json")))
    }

    static func bytes(_ hex: String?) -> Data {
        guard let hex else { return Data() }
        var data = Data()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            data.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return data
    }

    /// Counts what happened, and records every vector whose outcome contradicts its result.
    struct Tally {
        var accepted = 0, refused = 0, checked = 0

        mutating func record(_ vector: Vector, accepted ok: Bool, file: String) {
            checked += 1
            if ok { accepted += 1 } else { refused += 1 }
            if vector.result == "valid" { #expect(ok, "\(file) #\(vector.tcId) is valid but was refused") }
            if vector.result == "invalid" { #expect(!ok, "\(file) #\(vector.tcId) is invalid but was accepted") }
        }
    }

    @Test(arguments: [
        ("ecdsa_secp256r1_sha256_test", "algid:sign:ECDSA:message-X962:SHA256"),
        ("ecdsa_secp384r1_sha384_test", "algid:sign:ECDSA:message-X962:SHA384"),
    ])
    func ecdsaX962(_ file: String, _ algorithm: String) throws {
        let vectors = try Self.load(file)
        var tally = Tally()
        for group in vectors.testGroups {
            let key = try AsymmetricKey(
                externalRepresentation: Self.bytes(group.publicKey?.uncompressed), type: .ellipticCurve,
                isPrivate: false)
            for vector in group.tests {
                let ok: Bool
                do {
                    try key.verify(
                        KeyAlgorithm(rawValue: algorithm), Self.bytes(vector.msg), signature: Self.bytes(vector.sig))
                    ok = true
                } catch {
                    #expect(error.kind == .verifyFailed)
                    ok = false
                }
                tally.record(vector, accepted: ok, file: file)
            }
        }
        #expect(tally.checked == vectors.numberOfTests)
        #expect(tally.accepted > 0 && tally.refused > 0)
    }

    @Test func ecdsaRFC4754TakesTheDigest() throws {
        let file = "ecdsa_secp256r1_sha256_p1363_test"
        let vectors = try Self.load(file)
        var tally = Tally()
        for group in vectors.testGroups {
            let key = try AsymmetricKey(
                externalRepresentation: Self.bytes(group.publicKey?.uncompressed), type: .ellipticCurve,
                isPrivate: false)
            for vector in group.tests {
                let digest = Self.bytes(vector.msg).withUnsafeBytes { OpenSSL.digest("SHA256", [$0])! }
                let ok =
                    (try? key.verify(
                        KeyAlgorithm(rawValue: "algid:sign:ECDSA:RFC4754"), digest, signature: Self.bytes(vector.sig)))
                    != nil
                tally.record(vector, accepted: ok, file: file)
            }
        }
        #expect(tally.checked == vectors.numberOfTests)
    }

    @Test(arguments: [
        ("rsa_signature_2048_sha256_test", "algid:sign:RSA:message-PKCS1v15:SHA256"),
        ("rsa_pss_2048_sha256_mgf1_32_test", "algid:sign:RSA:message-PSS:SHA256:SHA256:32"),
    ])
    func rsaSignatures(_ file: String, _ algorithm: String) throws {
        let vectors = try Self.load(file)
        var tally = Tally()
        for group in vectors.testGroups {
            let key = try AsymmetricKey(
                externalRepresentation: Self.bytes(group.publicKeyAsn), type: .rsa, isPrivate: false)
            #expect(key.sizeInBits == 2048)
            for vector in group.tests {
                let ok =
                    (try? key.verify(
                        KeyAlgorithm(rawValue: algorithm), Self.bytes(vector.msg), signature: Self.bytes(vector.sig)))
                    != nil
                tally.record(vector, accepted: ok, file: file)
            }
        }
        #expect(tally.checked == vectors.numberOfTests)
    }

    /// The PKCS #1 RSAPrivateKey inside a PKCS #8 PrivateKeyInfo (Apple's private key format).
    static func pkcs1(fromPKCS8 der: Data) throws -> Data {
        let bytes = [UInt8](der)
        var outer = DERReader(bytes)
        let info = try outer.next(tag: 0x30, "PrivateKeyInfo")
        var fields = DERReader(bytes, range: info.contents)
        _ = try fields.next(tag: 0x02, "version")
        _ = try fields.next(tag: 0x30, "algorithm")
        let key = try fields.next(tag: 0x04, "privateKey")
        return Data(bytes[key.contents])
    }

    @Test func rsaOAEPDecryption() throws {
        let file = "rsa_oaep_2048_sha256_mgf1sha256_test"
        let vectors = try Self.load(file)
        var tally = Tally()
        for group in vectors.testGroups {
            let key = try AsymmetricKey(
                externalRepresentation: Self.pkcs1(fromPKCS8: Self.bytes(group.privateKeyPkcs8)), type: .rsa,
                isPrivate: true)
            // Apple's OAEP has an empty label; vectors with a label are for other APIs.
            for vector in group.tests where (vector.label ?? "").isEmpty {
                let plaintext = try? key.decrypt(
                    KeyAlgorithm(rawValue: "algid:encrypt:RSA:OAEP:SHA256"), Self.bytes(vector.ct))
                if let plaintext, vector.result == "valid" {
                    #expect(plaintext == Self.bytes(vector.msg), "#\(vector.tcId)")
                }
                tally.record(vector, accepted: plaintext != nil, file: file)
            }
        }
        #expect(tally.checked > 20)
    }

    @Test func ecdhSharedSecrets() throws {
        let file = "ecdh_secp256r1_ecpoint_test"
        let vectors = try Self.load(file)
        var tally = Tally()
        for group in vectors.testGroups {
            for vector in group.tests {
                var scalar = [UInt8](Self.bytes(vector.private))
                while scalar.count > 32, scalar.first == 0 { scalar.removeFirst() }
                scalar = [UInt8](repeating: 0, count: max(0, 32 - scalar.count)) + scalar
                let privateKey = try #require(
                    OpenSSL.importEC(group: "P-256", point: nil, scalar: SecureBytes(copying: scalar)))
                var shared: Data?
                if let peer = try? AsymmetricKey(
                    externalRepresentation: Self.bytes(vector.public), type: .ellipticCurve, isPrivate: false)
                {
                    shared = OpenSSL.derive(privateKey, peer: peer.handle)?.withUnsafeBytes { Data($0) }
                }
                if let shared, vector.result == "valid" {
                    #expect(shared == Self.bytes(vector.shared), "#\(vector.tcId)")
                }
                tally.record(vector, accepted: shared != nil, file: file)
            }
        }
        #expect(tally.checked == vectors.numberOfTests)
        #expect(tally.refused > 0)
    }
}
