import Foundation
import LatchkeySecurity
import Testing

/// `SecKeyCreateWithData` takes an RSA public key only when corecrypto would: `SecRSAPublicKeyInit` (SecRSAKey.c)
/// hands the bytes to `ccrsa_import_pub_n` and `ccrsa_import_pub`, which decode a PKCS #1 `RSAPublicKey` (or a
/// SubjectPublicKeyInfo holding one) of non-negative INTEGERs, a modulus of at most 8192 bits (128 64-bit
/// words) and an exponent no wider, and then refuse a modulus that is even or less than 3 (`cczp_init`).
/// Whatever `kSecAttrKeySizeInBits` says, and whatever the size: there is no minimum.
@Suite struct SecKeyRSAPublicKeyImportTests {
    /// A DER element (definite length).
    static func element(_ tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
        var length: [UInt8] = []
        if contents.count < 0x80 {
            length = [UInt8(contents.count)]
        } else {
            var rest = contents.count
            while rest > 0 {
                length.insert(UInt8(rest & 0xFF), at: 0)
                rest >>= 8
            }
            length.insert(0x80 | UInt8(length.count), at: 0)
        }
        return [tag] + length + contents
    }

    /// PKCS #1 `RSAPublicKey` with these INTEGER contents octets, exactly as given (a sign octet is not added).
    static func pkcs1(modulus: [UInt8], exponent: [UInt8]) -> Data {
        Data(element(0x30, element(0x02, modulus) + element(0x02, exponent)))
    }

    /// A SubjectPublicKeyInfo (rsaEncryption, NULL parameters) holding a PKCS #1 key.
    static func subjectPublicKeyInfo(_ pkcs1: Data) -> Data {
        let rsaEncryption: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
        let algorithm = element(0x30, rsaEncryption + [0x05, 0x00])
        return Data(element(0x30, algorithm + element(0x03, [0] + Array(pkcs1))))
    }

    /// `SecKeyCreateWithData` of `data` as an RSA public key with `kSecAttrKeySizeInBits`, and its error.
    static func create(_ data: Data, bits: Int) -> (SecKey?, CFError?) {
        let attributes: [String: Any] = [
            kSecAttrKeyType as String: kSecAttrKeyTypeRSA, kSecAttrKeyClass as String: kSecAttrKeyClassPublic,
            kSecAttrKeySizeInBits as String: bits,
        ]
        var error: Unmanaged<CFError>?
        let key = SecKeyCreateWithData(data as CFData, attributes as CFDictionary, &error)
        return (key, error?.takeRetainedValue())
    }

    /// A fresh RSA public key's modulus and exponent (INTEGER contents octets, sign octet included).
    static func generated(bits: Int) throws -> (modulus: [UInt8], exponent: [UInt8]) {
        var error: Unmanaged<CFError>?
        let key = try #require(
            SecKeyCreateRandomKey(
                [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeySizeInBits: bits] as CFDictionary, &error))
        let external = try #require(SecKeyCopyPublicKey(key).flatMap { SecKeyCopyExternalRepresentation($0, nil) })
        let bytes = Array(external as Data)
        // SEQUENCE header, then INTEGER n, INTEGER e: read the two back.
        var index = bytes[1] & 0x80 == 0 ? 2 : 2 + Int(bytes[1] & 0x7F)
        func integer() -> [UInt8] {
            index += 1
            var length = Int(bytes[index])
            index += 1
            if length & 0x80 != 0 {
                let count = length & 0x7F
                length = bytes[index..<(index + count)].reduce(0) { $0 << 8 | Int($1) }
                index += count
            }
            defer { index += length }
            return Array(bytes[index..<(index + length)])
        }
        let modulus = integer()
        return (modulus, integer())
    }

    /// JOSESwift's `testPublicKeyFromMisformedModulus`: "ABCD" and "EFGH" as modulus and exponent, DER-encoded
    /// as PKCS #1 (the modulus with a leading 0, as the library writes it), 32 bits given. Apple refuses it:
    /// 0x41424344 is even. So is the same key in a SubjectPublicKeyInfo.
    @Test func theJOSEMisformedModulusIsRefused() {
        let key = Self.pkcs1(modulus: [0] + Array("ABCD".utf8), exponent: Array("EFGH".utf8))
        for data in [key, Self.subjectPublicKeyInfo(key)] {
            let (made, error) = Self.create(data, bits: 32)
            #expect(made == nil)
            #expect(error.map(CFErrorGetCode) == CFIndex(errSecParam))
            #expect(error.map { CFErrorGetDomain($0) as String } == NSOSStatusErrorDomain)
            #expect(error?.userInfo["NSDescription"] as? String == "RSA public key creation from data failed")
        }
    }

    /// Everything else corecrypto refuses: a modulus that is even, 1, 0 or negative; a negative exponent; an
    /// exponent that takes more 64-bit words than the modulus; a modulus of more than 8192 bits.
    @Test func whatCorecryptoRefusesIsParam() throws {
        let real = try Self.generated(bits: 1024)
        var even = real.modulus
        even[even.count - 1] &= 0xFE
        let over8192 = [0x00] + [UInt8](repeating: 0xFF, count: 1025)  // 8200 bits, odd
        let cases: [(String, Data)] = [
            ("an even modulus", Self.pkcs1(modulus: even, exponent: real.exponent)),
            ("a modulus of 1", Self.pkcs1(modulus: [0x01], exponent: [0x03])),
            ("a modulus of 0", Self.pkcs1(modulus: [0x00], exponent: [0x03])),
            ("a negative modulus", Self.pkcs1(modulus: Array(real.modulus.drop(while: { $0 == 0 })), exponent: [3])),
            ("a negative exponent", Self.pkcs1(modulus: real.modulus, exponent: [0x81])),
            (
                "an exponent wider than the modulus",
                Self.pkcs1(modulus: [0x7F, 1, 2, 3, 4, 5, 6, 7], exponent: [0x01, 0, 0, 0, 0, 0, 0, 0, 1])
            ),
            ("a modulus of 8200 bits", Self.pkcs1(modulus: over8192, exponent: [0x01, 0x00, 0x01])),
        ]
        for (what, data) in cases {
            for form in [data, Self.subjectPublicKeyInfo(data)] {
                let (made, error) = Self.create(form, bits: 2048)
                #expect(made == nil, "\(what)")
                #expect(error.map(CFErrorGetCode) == CFIndex(errSecParam), "\(what)")
            }
        }
    }

    /// What corecrypto takes stays taken, in both encodings and whatever size is given: real keys of 512,
    /// 1024 and 2048 bits, an odd modulus of exactly 8192 bits, an exponent as wide as the modulus — and an
    /// odd modulus of 32 bits, as `SecRSAPublicKeyInit` has no minimum size.
    @Test func whatCorecryptoTakesIsTaken() throws {
        var cases: [(Data, Int)] = []
        for bits in [512, 1024, 2048] {
            let real = try Self.generated(bits: bits)
            cases.append((Self.pkcs1(modulus: real.modulus, exponent: real.exponent), bits / 8))
        }
        let largest = [0x00] + [UInt8](repeating: 0xFF, count: 1024)
        cases.append((Self.pkcs1(modulus: largest, exponent: [0x01, 0x00, 0x01]), 1024))
        cases.append((Self.pkcs1(modulus: [0x7F, 1, 2, 3, 4, 5, 6, 7], exponent: [0x7F, 0, 0, 0, 0, 0, 0, 1]), 8))
        cases.append((Self.pkcs1(modulus: [0] + Array("ABCE".utf8), exponent: [0x01, 0x00, 0x01]), 4))
        for (data, blockSize) in cases {
            for form in [data, Self.subjectPublicKeyInfo(data)] {
                let (made, error) = Self.create(form, bits: 32)
                let key = try #require(made, "\(blockSize)-byte modulus: \(String(describing: error))")
                #expect(SecKeyGetBlockSize(key) == blockSize)
            }
        }
    }
}
