import Foundation
import LatchkeyPKI
import Testing

/// Keys: what Python's `cryptography` made (Tests/Tools/make-key-vectors.py: ECIES and RSA-AES-GCM in
/// Apple's byte layout, X9.63 key agreements, signatures) decrypts, derives and verifies here; round trips
/// of every algorithm; Apple's external representations; and bad input refused with Apple's statuses.
@Suite struct AsymmetricKeyTests {
    struct Vector: Decodable {
        let kind: String
        let algorithm: String
        let keyType: String
        let privateKey: String
        let plaintext: String?
        let ciphertext: String?
        let sharedInfo: String?
        let aad: String?
        let symmetricKeySizeInBits: Int?
        let peer: String?
        let requestedSize: Int?
        let result: String?
        let message: String?
        let signature: String?
    }

    static func bytes(_ hex: String?) -> Data { WycheproofTests.bytes(hex) }

    static let vectors: [Vector] = {
        let url = WycheproofTests.directory.deletingLastPathComponent().appendingPathComponent("keys/vectors.json")
        return (try? JSONDecoder().decode([Vector].self, from: Data(contentsOf: url))) ?? []
    }()

    @Test(arguments: vectors.indices)
    func whatAnotherImplementationMadeOpensHere(_ index: Int) throws {
        let vector = Self.vectors[index]
        let key = try AsymmetricKey(
            externalRepresentation: Self.bytes(vector.privateKey), type: KeyType(rawValue: vector.keyType)!,
            isPrivate: true)
        let algorithm = KeyAlgorithm(rawValue: vector.algorithm)
        var parameters = KeyOperationParameters()
        if let info = vector.sharedInfo, !info.isEmpty { parameters.sharedInfo = Self.bytes(info) }
        if let aad = vector.aad, !aad.isEmpty { parameters.additionalAuthenticatedData = Self.bytes(aad) }
        if let bits = vector.symmetricKeySizeInBits, bits > 0 { parameters.symmetricKeySizeInBits = bits }
        switch vector.kind {
        case "ecies", "decrypt":
            #expect(
                try key.decrypt(algorithm, Self.bytes(vector.ciphertext), parameters: parameters)
                    == Self.bytes(vector.plaintext))
            // And what this side encrypts, this side decrypts (Python checks nothing at test time).
            let again = try key.publicKey.encrypt(algorithm, Self.bytes(vector.plaintext), parameters: parameters)
            #expect(try key.decrypt(algorithm, again, parameters: parameters) == Self.bytes(vector.plaintext))
            // One flipped bit anywhere: errSecParam, never a wrong plaintext.
            var tampered = Self.bytes(vector.ciphertext)
            tampered[tampered.count - 1] ^= 1
            #expect(throws: KeyError.self) { try key.decrypt(algorithm, tampered, parameters: parameters) }
        case "exchange":
            if let size = vector.requestedSize, size > 0 { parameters.requestedSize = size }
            let peer = try AsymmetricKey(
                externalRepresentation: Self.bytes(vector.peer), type: .ellipticCurve, isPrivate: false)
            #expect(try key.keyExchange(algorithm, with: peer, parameters: parameters) == Self.bytes(vector.result))
        case "verify":
            try key.publicKey.verify(algorithm, Self.bytes(vector.message), signature: Self.bytes(vector.signature))
            var wrong = Self.bytes(vector.message)
            wrong.append(0)
            #expect(throws: KeyError(.verifyFailed, "\(vector.algorithm): the signature does not verify")) {
                try key.publicKey.verify(algorithm, wrong, signature: Self.bytes(vector.signature))
            }
        default:
            Issue.record("unknown vector kind \(vector.kind)")
        }
    }

    @Test func theIndependentVectorsAreThere() {
        #expect(Self.vectors.count == 15)
    }

    static let signingAlgorithms: [(KeyType, Int, String)] = [
        (.ellipticCurve, 256, "algid:sign:ECDSA:message-X962:SHA256"),
        (.ellipticCurve, 384, "algid:sign:ECDSA:message-X962:SHA384"),
        (.ellipticCurve, 521, "algid:sign:ECDSA:message-X962:SHA512"),
        (.ellipticCurve, 256, "algid:sign:ECDSA:message-X962:SHA1"),
        (.rsa, 2048, "algid:sign:RSA:message-PKCS1v15:SHA256"),
        (.rsa, 2048, "algid:sign:RSA:message-PSS:SHA512:SHA512:64"),
    ]

    @Test func everyKindOfKeySignsAndVerifies() throws {
        for (type, bits, name) in Self.signingAlgorithms {
            let key = try AsymmetricKey.generate(type, bits: bits)
            #expect(key.sizeInBits == bits)
            let signature = try key.sign(KeyAlgorithm(rawValue: name), Data("message".utf8))
            try key.publicKey.verify(KeyAlgorithm(rawValue: name), Data("message".utf8), signature: signature)
        }
    }

    @Test func digestAlgorithmsTakeADigestOfTheRightLength() throws {
        let key = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let digest = Data(repeating: 7, count: 32)
        let rfc = try key.sign(KeyAlgorithm(rawValue: "algid:sign:ECDSA:RFC4754"), digest)
        #expect(rfc.count == 64)
        try key.verify(KeyAlgorithm(rawValue: "algid:sign:ECDSA:RFC4754"), digest, signature: rfc)
        let x962 = try key.sign(KeyAlgorithm(rawValue: "algid:sign:ECDSA:digest-X962:SHA256"), digest)
        try key.verify(KeyAlgorithm(rawValue: "algid:sign:ECDSA:digest-X962"), digest, signature: x962)
        #expect(throws: KeyError(.param, "a SHA256 digest is 32 bytes, not 5")) {
            try key.sign(KeyAlgorithm(rawValue: "algid:sign:ECDSA:digest-X962:SHA256"), Data("short".utf8))
        }
        let rsa = try AsymmetricKey.generate(.rsa, bits: 2048)
        let pss = try rsa.sign(KeyAlgorithm(rawValue: "algid:sign:RSA:digest-PSS:SHA256:SHA256:32"), digest)
        try rsa.verify(KeyAlgorithm(rawValue: "algid:sign:RSA:digest-PSS:SHA256:SHA256:32"), digest, signature: pss)
        let pkcs1 = try rsa.sign(KeyAlgorithm(rawValue: "algid:sign:RSA:digest-PKCS1v15:SHA256"), digest)
        try rsa.verify(KeyAlgorithm(rawValue: "algid:sign:RSA:digest-PKCS1v15:SHA256"), digest, signature: pkcs1)
    }

    @Test func externalRepresentationsHaveApplesLayout() throws {
        for bits in [256, 384, 521] {
            let key = try AsymmetricKey.generate(.ellipticCurve, bits: bits)
            let coordinate = (bits + 7) / 8
            let external = try key.externalRepresentation()
            #expect(external.count == 1 + 3 * coordinate)
            #expect(key.publicKeyData.count == 1 + 2 * coordinate && key.publicKeyData.first == 4)
            let again = try AsymmetricKey(
                externalRepresentation: external.copiedData(), type: .ellipticCurve, isPrivate: true)
            #expect(again == key)
            // The public half is made once and kept (loading it checks the point, as costly as a signature).
            #expect(key.publicKey === key.publicKey)
            #expect(key.publicKey.publicKey === key.publicKey)
            #expect(key.applicationLabel.count == 20)
            #expect(key.description == "EC private key, \(bits) bits")
        }
        let rsa = try AsymmetricKey.generate(.rsa, bits: 2048)
        #expect(rsa.blockSize == 256)
        #expect(rsa.publicKeyData.first == 0x30)
        let reloaded = try AsymmetricKey(
            externalRepresentation: rsa.externalRepresentation().copiedData(), type: .rsa, isPrivate: true)
        #expect(reloaded == rsa)
        #expect(reloaded.publicKey == rsa.publicKey)
    }

    @Test func badKeysAndWrongUsesGetApplesStatuses() throws {
        #expect(throws: KeyError(.param, "an EC key is 256, 384 or 521 bits, not 255")) {
            try AsymmetricKey.generate(.ellipticCurve, bits: 255)
        }
        #expect(throws: KeyError(.param, "an RSA key is 1024 to 8192 bits, a multiple of 8, not 512")) {
            try AsymmetricKey.generate(.rsa, bits: 512)
        }
        let key = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        var offCurve = key.publicKeyData
        offCurve[offCurve.count - 1] ^= 1
        #expect(throws: KeyError(.decode, "the data is not a valid EC public key")) {
            try AsymmetricKey(externalRepresentation: offCurve, type: .ellipticCurve, isPrivate: false)
        }
        #expect(throws: KeyError.self) {
            try AsymmetricKey(externalRepresentation: Data([4, 1, 2]), type: .ellipticCurve, isPrivate: false)
        }
        #expect(throws: KeyError.self) {
            try AsymmetricKey(externalRepresentation: Data("junk".utf8), type: .rsa, isPrivate: false)
        }
        // A private key whose point is not its scalar's.
        var mismatched = try key.externalRepresentation().copiedData()
        let other = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        mismatched.replaceSubrange(0..<65, with: other.publicKeyData)
        #expect(throws: KeyError.self) {
            try AsymmetricKey(externalRepresentation: mismatched, type: .ellipticCurve, isPrivate: true)
        }
        // Public keys cannot sign or decrypt; keys of one type do not run the other's algorithms.
        let ecdsa = KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256")
        #expect(
            !key.publicKey.supports(.sign, ecdsa) && key.publicKey.supports(.verify, ecdsa)
                && key.supports(.sign, ecdsa))
        #expect(throws: KeyError.self) { try key.publicKey.sign(ecdsa, Data()) }
        #expect(throws: KeyError.self) {
            try key.sign(KeyAlgorithm(rawValue: "algid:sign:RSA:message-PKCS1v15:SHA256"), Data())
        }
        #expect(!key.supports(.sign, KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:MD5")))
        #expect(throws: KeyError(.param, "kSecKeyKeyExchangeParameterRequestedSize is missing")) {
            try key.keyExchange(KeyAlgorithm(rawValue: "algid:keyexchange:ECDH:KDFX963:SHA256"), with: other.publicKey)
        }
        let big = try AsymmetricKey.generate(.ellipticCurve, bits: 384)
        #expect(throws: KeyError(.param, "the peer's key is not on this key's curve")) {
            try key.keyExchange(KeyAlgorithm(rawValue: "algid:keyexchange:ECDH"), with: big.publicKey)
        }
        // ECIES input shorter than a point and a tag.
        #expect(throws: KeyError(.param, "too small input packet for ECIES decrypt")) {
            try key.decrypt(
                KeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV"), Data(count: 70))
        }
        let rsa = try AsymmetricKey.generate(.rsa, bits: 1024)
        #expect(throws: KeyError.self) {
            try rsa.encrypt(KeyAlgorithm(rawValue: "algid:encrypt:RSA:OAEP:SHA512"), Data(count: 200))
        }
    }
}
