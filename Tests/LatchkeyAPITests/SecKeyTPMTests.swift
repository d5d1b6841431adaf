import Foundation
import Latchkey
import LatchkeySecurity
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

extension GlobalSecItemTests {
    /// SecKey for Secure Enclave keys made inside the TPM: `SecKeyCreateRandomKey` with
    /// `kSecAttrTokenIDSecureEnclave` makes a P-256 key in the TPM when one answers, which signs what its
    /// public key verifies, is never exported (`errSecUnimplemented`, as every key the keychain holds), and
    /// reports where it lives in `kSecAttrLatchkeyKeyStorage`; without a TPM it is held in software and says so.
    @Suite(.dedicatedThreads) struct SecKeyTPMTests {
        let memory = InMemoryKeychain()
        init() { memory.install() }

        static let tag = Data("com.example.tpm".utf8)

        func status(_ error: Unmanaged<CFError>?) -> Int? { error?.takeRetainedValue().code }

        /// A Secure Enclave P-256 key; `permanent` false leaves `kSecAttrIsPermanent` out (Apple's default, false).
        func enclaveKey(permanent: Bool = true) -> (SecKey?, Int?) {
            var error: Unmanaged<CFError>?
            var parameters: [String: Any] = [
                kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256,
                kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave,
            ]
            if permanent {
                parameters[kSecPrivateKeyAttrs as String] =
                    [kSecAttrIsPermanent as String: true, kSecAttrApplicationTag as String: Self.tag] as [String: Any]
            }
            let key = SecKeyCreateRandomKey(parameters as CFDictionary, &error)
            return (key, status(error))
        }

        @Test func aSecureEnclaveKeyIsMadeInTheTPMAndNeverExported() throws {
            let tpm = try SoftwareTPM()
            try TPMAddress.$scoped.withValue(tpm.tcti) {
                let (made, failure) = enclaveKey()
                #expect(failure == nil)
                let key = try #require(made)
                #expect(key.description == "<SecKey EC private key, 256 bits, held by com.apple.setoken, in the TPM>")
                let publicKey = try #require(SecKeyCopyPublicKey(key))
                var error: Unmanaged<CFError>?
                let message = Data("transfer 10".utf8) as CFData
                let signature = try #require(
                    SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message, &error))
                #expect(SecKeyVerifySignature(publicKey, .ecdsaSignatureMessageX962SHA256, message, signature, &error))

                #expect(SecKeyCopyExternalRepresentation(key, &error) == nil)
                #expect(status(error) == Int(errSecUnimplemented))
                let attributes = try #require(SecKeyCopyAttributes(key) as? [String: Any])
                #expect(attributes[kSecAttrLatchkeyKeyStorage as String] as? String == "tpm")
                #expect(attributes[kSecAttrTokenID as String] as? String == "com.apple.setoken")
                #expect(attributes[kSecAttrIsExtractable as String] as? Bool == false)
                #expect(attributes[kSecValueData as String] == nil)

                // Found again, it is the same key and still lives in the TPM; a search names where.
                var found: CFTypeRef?
                #expect(
                    SecItemCopyMatching(
                        [
                            kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Self.tag,
                            kSecReturnAttributes as String: true,
                        ] as CFDictionary, &found) == errSecSuccess)
                let item = try #require(found as? [String: Any])
                #expect(item[kSecAttrLatchkeyKeyStorage as String] as? String == "tpm")
                #expect(
                    SecItemCopyMatching(
                        [
                            kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Self.tag,
                            kSecReturnRef as String: true,
                        ] as CFDictionary, &found) == errSecSuccess)
                let again = try #require(found as? SecKey)
                #expect(again == key)
                #expect(
                    (SecKeyCopyAttributes(again) as? [String: Any])?[kSecAttrLatchkeyKeyStorage as String] as? String
                        == "tpm")
            }
        }

        /// An ephemeral Secure Enclave key (no `kSecAttrIsPermanent`, Apple's default false) is made in the
        /// TPM too, refused for export the same way, and gone when the keychain locks.
        @Test func anEphemeralSecureEnclaveKeyIsMadeInTheTPMAndNeverExported() throws {
            let tpm = try SoftwareTPM()
            try TPMAddress.$scoped.withValue(tpm.tcti) {
                let (made, failure) = enclaveKey(permanent: false)
                #expect(failure == nil)
                let key = try #require(made)
                var error: Unmanaged<CFError>?
                #expect(key.description == "<SecKey EC private key, 256 bits, held by com.apple.setoken, in the TPM>")
                let attributes = try #require(SecKeyCopyAttributes(key) as? [String: Any])
                #expect(attributes[kSecAttrLatchkeyKeyStorage as String] as? String == "tpm")
                #expect(attributes[kSecAttrIsExtractable as String] as? Bool == false)
                #expect(attributes[kSecValueData as String] == nil)
                #expect(SecKeyCopyExternalRepresentation(key, &error) == nil)
                #expect(status(error) == Int(errSecUnimplemented))

                let publicKey = try #require(SecKeyCopyPublicKey(key))
                let message = Data("session".utf8) as CFData
                let signature = try #require(
                    SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message, &error))
                #expect(SecKeyVerifySignature(publicKey, .ecdsaSignatureMessageX962SHA256, message, signature, &error))
                // Not an item: a search finds no key.
                var found: CFTypeRef?
                #expect(
                    SecItemCopyMatching(
                        [kSecClass as String: kSecClassKey, kSecReturnRef as String: true] as CFDictionary, &found)
                        == errSecItemNotFound)
            }
        }

        @Test func withoutATPMTheKeyIsHeldInSoftwareAndSaysSo() throws {
            let directory = TemporaryDirectory()
            try TPMAddress.$scoped.withValue("swtpm:path=\(directory.file("none.sock"))") {
                let key = try #require(enclaveKey().0)
                #expect(key.description == "<SecKey EC private key, 256 bits, held by com.apple.setoken>")
                let attributes = try #require(SecKeyCopyAttributes(key) as? [String: Any])
                #expect(attributes[kSecAttrLatchkeyKeyStorage as String] as? String == "software")
                var error: Unmanaged<CFError>?
                #expect(SecKeyCopyExternalRepresentation(key, &error) == nil)
                #expect(status(error) == Int(errSecUnimplemented))
            }
        }
    }
}
