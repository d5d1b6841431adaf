import Foundation
import LatchkeySecurity
import Testing

/// Security's errors are what Apple's `SecError` makes (utilities/SecCFError.c): `NSOSStatusErrorDomain`, the
/// status, and the message under `kCFErrorDescriptionKey` ("NSDescription"), which Core Foundation describes as
/// "The operation couldn’t be completed. (OSStatus error <status> - <message>)" — the text JOSESwift's suite
/// compares after decrypting with the wrong RSA key, whose message is `SecKeyAdaptors.m`'s "RSAdecrypt wrong
/// input (err %d)" with corecrypto's CCRSA_PRIVATE_OP_ERROR (-27), for PKCS #1 and OAEP alike.
@Suite struct SecurityErrorDescriptionTests {
    @Test func aWrongKeysDecryptionIsDescribedAsOnApplePlatforms() throws {
        var error: Unmanaged<CFError>?
        let parameters = [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeySizeInBits: 2048] as CFDictionary
        let alice = try #require(SecKeyCreateRandomKey(parameters, &error))
        let bob = try #require(SecKeyCreateRandomKey(parameters, &error))
        let alicePublic = try #require(SecKeyCopyPublicKey(alice))
        let expected = "The operation couldn’t be completed. (OSStatus error -50 - RSAdecrypt wrong input (err -27))"
        for algorithm: SecKeyAlgorithm in [.rsaEncryptionPKCS1, .rsaEncryptionOAEPSHA1, .rsaEncryptionOAEPSHA256] {
            let ciphertext = try #require(
                SecKeyCreateEncryptedData(alicePublic, algorithm, Data("secret".utf8) as CFData, &error))
            #expect(SecKeyCreateDecryptedData(alice, algorithm, ciphertext, &error) as Data? == Data("secret".utf8))
            var failure: Unmanaged<CFError>?
            #expect(SecKeyCreateDecryptedData(bob, algorithm, ciphertext, &failure) == nil)
            let decryptionError = try #require(failure?.takeRetainedValue())
            #expect(CFErrorGetCode(decryptionError) == CFIndex(errSecParam))
            #expect(decryptionError.domain == NSOSStatusErrorDomain)
            #expect(decryptionError.userInfo["NSDescription"] as? String == "RSAdecrypt wrong input (err -27)")
            #expect(decryptionError.userInfo[NSLocalizedDescriptionKey] == nil)
            #expect(decryptionError.localizedDescription == expected)
            #expect(CFErrorCopyDescription(decryptionError) as String == expected)
            #expect((decryptionError as any Error).localizedDescription == expected)
        }
    }
}
