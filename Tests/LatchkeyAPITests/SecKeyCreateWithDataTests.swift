import Foundation
import LatchkeySecurity
import Testing

/// `SecKeyCreateWithData` reads its attributes as `SecKey.c` does: `kSecAttrKeyType` and `kSecAttrKeyClass`
/// (each through `SecKeyParamsGetCFIndex`: a number, or text that is exactly a decimal integer), and
/// nothing else — `kSecAttrKeySizeInBits` is never looked at, so a size that disagrees with the key (libraries
/// pass `data.count * 8`) makes no difference.
@Suite struct SecKeyCreateWithDataTests {
    func status(_ error: Unmanaged<CFError>?) -> Int? { error?.takeRetainedValue().code }

    func external(_ type: CFString, bits: Int, private isPrivate: Bool) throws -> Data {
        var error: Unmanaged<CFError>?
        let key = try #require(
            SecKeyCreateRandomKey([kSecAttrKeyType: type, kSecAttrKeySizeInBits: bits] as CFDictionary, &error))
        let half = isPrivate ? key : try #require(SecKeyCopyPublicKey(key))
        return try #require(SecKeyCopyExternalRepresentation(half, &error) as Data?)
    }

    /// `SecKeyCreateWithData` has no case for `kSecAttrKeySizeInBits`: a wrong size, text, or nonsense is
    /// ignored and the key is the one the bytes hold.
    @Test func theSizeAttributeIsIgnored() throws {
        let rsa = try external(kSecAttrKeyTypeRSA, bits: 1024, private: false)
        for size: Any in [rsa.count * 8, 1024, 4096, "lots", Data([1])] {
            var error: Unmanaged<CFError>?
            let key = SecKeyCreateWithData(
                rsa as CFData,
                [
                    kSecAttrKeyType as String: kSecAttrKeyTypeRSA,
                    kSecAttrKeyClass as String: kSecAttrKeyClassPublic,
                    kSecAttrKeySizeInBits as String: size,
                ] as CFDictionary, &error)
            #expect(error == nil)
            let attributes = try #require(key.flatMap(SecKeyCopyAttributes) as? [String: Any])
            #expect(attributes[kSecAttrKeySizeInBits as String] as? Int == 1024)
        }
        let ec = try external(kSecAttrKeyTypeECSECPrimeRandom, bits: 256, private: true)
        var error: Unmanaged<CFError>?
        #expect(
            SecKeyCreateWithData(
                ec as CFData,
                [
                    kSecAttrKeyType: kSecAttrKeyTypeEC, kSecAttrKeyClass: kSecAttrKeyClassPrivate,
                    kSecAttrKeySizeInBits: 384,
                ] as CFDictionary, &error) != nil)
    }

    /// The type is 42 (RSA), 43 (the older ECDSA) or 73 (EC), as a number or its decimal text; the class 0
    /// (public) or 1 (private), 2 (symmetric) being `errSecUnimplemented`.
    @Test func typeAndClassAreNumbersOrTheirText() throws {
        let ec = try external(kSecAttrKeyTypeECSECPrimeRandom, bits: 256, private: false)
        for type: Any in [73, "73", 43, "43", NSNumber(value: 73)] {
            for keyClass: Any in [0, "0"] {
                var error: Unmanaged<CFError>?
                #expect(
                    SecKeyCreateWithData(
                        ec as CFData,
                        [kSecAttrKeyType as String: type, kSecAttrKeyClass as String: keyClass] as CFDictionary,
                        &error) != nil)
            }
        }
        var error: Unmanaged<CFError>?
        #expect(
            SecKeyCreateWithData(
                ec as CFData,
                [kSecAttrKeyType: kSecAttrKeyTypeEC, kSecAttrKeyClass: kSecAttrKeyClassSymmetric] as CFDictionary,
                &error) == nil)
        #expect(status(error) == Int(errSecUnimplemented))
    }

    /// `SecKeyParamsGetCFIndex` fails ("Unsupported key type" / "Unsupported key class", errSecParam) for a
    /// missing value, a negative one, text that is not exactly an integer, and a boolean (a CFBoolean is not
    /// a CFNumber); a known class with an unknown type is "Unsupported public key type".
    @Test func otherTypesAndClassesAreParamWithApplesMessage() throws {
        let ec = try external(kSecAttrKeyTypeECSECPrimeRandom, bits: 256, private: false)
        let cases: [([String: Any], String)] = [
            ([kSecAttrKeyClass as String: kSecAttrKeyClassPublic], "Unsupported key type: (null)"),
            ([kSecAttrKeyType as String: " 73", kSecAttrKeyClass as String: 0], "Unsupported key type:  73"),
            ([kSecAttrKeyType as String: -1, kSecAttrKeyClass as String: 0], "Unsupported key type: -1"),
            ([kSecAttrKeyType as String: true, kSecAttrKeyClass as String: 0], "Unsupported key type: true"),
            ([kSecAttrKeyType as String: 73], "Unsupported key class: (null)"),
            ([kSecAttrKeyType as String: 73, kSecAttrKeyClass as String: 3], "Unsupported key class: 3"),
            ([kSecAttrKeyType as String: 17, kSecAttrKeyClass as String: 0], "Unsupported public key type: 17"),
            ([kSecAttrKeyType as String: "17", kSecAttrKeyClass as String: 1], "Unsupported private key type: 17"),
        ]
        for (attributes, expected) in cases {
            var error: Unmanaged<CFError>?
            #expect(SecKeyCreateWithData(ec as CFData, attributes as CFDictionary, &error) == nil)
            let failure = try #require(error?.takeRetainedValue())
            #expect(failure.code == Int(errSecParam))
            #expect(failure.userInfo["NSDescription"] as? String == expected)
        }
    }

    /// Bytes that are not the key the attributes name are errSecParam with `SecKey.c`'s messages (its EC
    /// private branch says "public" too).
    @Test func bytesThatAreNotTheKeyAreParam() throws {
        let ec = try external(kSecAttrKeyTypeECSECPrimeRandom, bits: 256, private: false)
        let cases: [(CFString, CFString, String)] = [
            (kSecAttrKeyTypeRSA, kSecAttrKeyClassPublic, "RSA public key creation from data failed"),
            (kSecAttrKeyTypeRSA, kSecAttrKeyClassPrivate, "RSA private key creation from data failed"),
            (kSecAttrKeyTypeEC, kSecAttrKeyClassPrivate, "EC public key creation from data failed"),
        ]
        for (type, keyClass, expected) in cases {
            var error: Unmanaged<CFError>?
            #expect(
                SecKeyCreateWithData(
                    ec as CFData, [kSecAttrKeyType: type, kSecAttrKeyClass: keyClass] as CFDictionary, &error) == nil)
            let failure = try #require(error?.takeRetainedValue())
            #expect(failure.code == Int(errSecParam))
            #expect(failure.userInfo["NSDescription"] as? String == expected)
        }
    }

    /// With `kSecAttrTokenID`, `SecKeyCreateWithData` hands the attributes to CryptoTokenKit
    /// (`SecKeyCreateCTKKey`); Linux has no tokens.
    @Test func aTokenKeyIsUnimplemented() throws {
        let ec = try external(kSecAttrKeyTypeECSECPrimeRandom, bits: 256, private: true)
        var error: Unmanaged<CFError>?
        #expect(
            SecKeyCreateWithData(
                ec as CFData,
                [
                    kSecAttrKeyType: kSecAttrKeyTypeEC, kSecAttrKeyClass: kSecAttrKeyClassPrivate,
                    kSecAttrTokenID: kSecAttrTokenIDSecureEnclave,
                ] as CFDictionary, &error) == nil)
        #expect(status(error) == Int(errSecUnimplemented))
    }
}
