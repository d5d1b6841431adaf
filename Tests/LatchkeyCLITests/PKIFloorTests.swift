import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing
import latchkey_bench

/// `PKIFloor`, latchkey-bench's raw OpenSSL floor for `--pki`: each operation does the keychain's work — what
/// it signs verifies as the keychain's signature, what it seals the keychain's ECIES opens and the other way
/// round — so the floor measures the same work with nothing around it.
@Suite struct PKIFloorTests {
    let message = Data(repeating: 0x42, count: 256)
    let ecdsa = KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256")
    let pkcs1 = KeyAlgorithm(rawValue: "algid:sign:RSA:message-PKCS1v15:SHA256")
    let ecies = KeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV")

    @Test func theFloorsSignaturesAreTheKeychainsSignatures() throws {
        let p256 = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let signature = try #require(PKIFloor(p256).signSHA256(message))
        try p256.publicKey.verify(ecdsa, message, signature: signature)
        let floor = PKIFloor(p256.publicKey)
        #expect(floor.verifySHA256(message, signature: try p256.sign(ecdsa, message)))
        #expect(!floor.verifySHA256(Data(message.dropFirst()), signature: signature))
        #expect(!floor.verifySHA256(message, signature: Data(signature.dropLast())))
        // PKCS #1 v1.5 is deterministic: the same bytes as the keychain's.
        let rsa = try AsymmetricKey.generate(.rsa, bits: 2048)
        #expect(try PKIFloor(rsa).signSHA256(message) == rsa.sign(pkcs1, message))
        #expect(PKIFloor(rsa.publicKey).verifySHA256(message, signature: try rsa.sign(pkcs1, message)))
    }

    @Test func theFloorsECIESIsTheKeychainsECIES() throws {
        let p256 = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let floor = PKIFloor(p256)
        let sealed = try #require(floor.eciesSeal(message, to: p256.publicKey))
        #expect(sealed.count == 65 + message.count + 16)
        #expect(try p256.decrypt(ecies, sealed) == message)
        #expect(floor.eciesOpen(try p256.publicKey.encrypt(ecies, message)) == message)
        #expect(floor.eciesOpen(sealed) == message)
        // Too short, a point off the curve, a changed byte: nothing opens.
        #expect(floor.eciesOpen(Data(sealed.prefix(80))) == nil)
        var offCurve = sealed
        offCurve[1] ^= 1
        #expect(floor.eciesOpen(offCurve) == nil)
        var tampered = sealed
        tampered[70] ^= 1
        #expect(floor.eciesOpen(tampered) == nil)
    }

    @Test func theFloorsCertificateDecodeTakesWholeCertificatesOnly() throws {
        let der = try Data(contentsOf: CertificateFixtures.directory.appendingPathComponent("leaf-ec256.der"))
        #expect(PKIFloor.decodeCertificate(der))
        #expect(!PKIFloor.decodeCertificate(der + Data([0])))
        #expect(!PKIFloor.decodeCertificate(Data(der.prefix(der.count - 1))))
        #expect(!PKIFloor.decodeCertificate(Data()))
    }
}
