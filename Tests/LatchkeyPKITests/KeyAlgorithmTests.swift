import Foundation
import Testing

@testable import LatchkeyPKI

/// `KeyAlgorithm` looks Apple's algorithm strings up in a table built from their parts; the table must
/// name exactly what the parser accepts, and strings outside it must still parse as before.
@Suite struct KeyAlgorithmTests {
    /// The strings of Apple's `kSecKeyAlgorithm…` constants that Latchkey runs (SecKey.h), written out.
    static let apple: [String] = {
        let digests = ["SHA1", "SHA224", "SHA256", "SHA384", "SHA512"]
        let lengths = ["SHA1": 20, "SHA224": 28, "SHA256": 32, "SHA384": 48, "SHA512": 64]
        var strings = [
            "algid:sign:ECDSA:RFC4754", "algid:sign:ECDSA:digest-X962", "algid:sign:RSA:digest-PKCS1v15",
            "algid:encrypt:RSA:PKCS1", "algid:keyexchange:ECDH", "algid:keyexchange:ECDHC",
            "algid:sign:RSA:raw", "algid:encrypt:RSA:raw",
        ]
        for digest in digests {
            let length = lengths[digest]!
            strings += [
                "algid:sign:ECDSA:digest-X962:\(digest)", "algid:sign:ECDSA:message-X962:\(digest)",
                "algid:sign:RSA:digest-PKCS1v15:\(digest)", "algid:sign:RSA:message-PKCS1v15:\(digest)",
                "algid:sign:RSA:digest-PSS:\(digest):\(digest):\(length)",
                "algid:sign:RSA:message-PSS:\(digest):\(digest):\(length)",
                "algid:encrypt:RSA:OAEP:\(digest)", "algid:encrypt:RSA:OAEP:\(digest):AESGCM",
                "algid:keyexchange:ECDH:KDFX963:\(digest)", "algid:keyexchange:ECDHC:KDFX963:\(digest)",
                "algid:encrypt:ECIES:ECDH:KDFX963:\(digest):AESGCM",
                "algid:encrypt:ECIES:ECDHC:KDFX963:\(digest):AESGCM",
            ]
            if digest != "SHA1" {
                strings += [
                    "algid:encrypt:ECIES:ECDH:KDFX963:\(digest):AESGCM-KDFIV",
                    "algid:encrypt:ECIES:ECDHC:KDFX963:\(digest):AESGCM-KDFIV",
                ]
            }
        }
        return strings
    }()

    /// Latchkey's own: Ed25519 signatures (SSH keys), which Apple's SecKey has no string for.
    static let latchkey = ["algid:sign:EdDSA:Ed25519"]

    @Test func theTableHoldsEveryStringTheParserAcceptsAndNoOther() {
        #expect(Self.apple.count == 76)
        #expect(KeyAlgorithm.known.count == Self.apple.count + Self.latchkey.count)
        for string in Self.apple + Self.latchkey {
            let parsed = KeyAlgorithm.parse(string)
            #expect(parsed != nil, "\(string)")
            #expect(KeyAlgorithm.known[string] == parsed, "\(string)")
            #expect(KeyAlgorithm(rawValue: string).spec == parsed, "\(string)")
        }
    }

    @Test func stringsOutsideTheTableAreParsedAndRefused() {
        for string in [
            "", "algid", "algid:sign:ECDSA:message-X962:MD5", "algid:sign:RSA:message-PSS:SHA256:SHA256:20",
            "algid:encrypt:ECIES:ECDH:KDFX963:SHA1:AESGCM-KDFIV", "algid:sign:ECDSA:RFC4754:SHA256",
            "ALGID:sign:ECDSA:RFC4754", "algid:keyexchange:ECDH:KDFX963", "algid:sign:RSA:raw:SHA256",
        ] {
            #expect(KeyAlgorithm.known[string] == nil, "\(string)")
            #expect(KeyAlgorithm(rawValue: string).spec == nil, "\(string)")
            #expect(KeyAlgorithm(rawValue: string).rawValue == string)
        }
    }
}
