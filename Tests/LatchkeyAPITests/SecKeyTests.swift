import Foundation
import Latchkey
import LatchkeySecurity
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

extension GlobalSecItemTests {
    /// SecKey through Apple's functions: generated (and stored, when permanent, as Apple stores each half),
    /// imported, exported, described by its attributes, used for signatures, encryption and key exchange,
    /// found again by reference — and refused with Apple's statuses when the input is wrong.
    @Suite(.dedicatedThreads) struct SecKeyTests {
        let memory = InMemoryKeychain()
        init() { memory.install() }

        func status(_ error: Unmanaged<CFError>?) -> Int? { error?.takeRetainedValue().code }

        func ecKey(_ extra: [String: Any] = [:]) throws -> SecKey {
            var error: Unmanaged<CFError>?
            let parameters =
                ([kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256]
                as [String: Any])
                .merging(extra) { _, new in new }
            let key = SecKeyCreateRandomKey(parameters as CFDictionary, &error)
            #expect(error == nil)
            return try #require(key)
        }

        @Test func signAndVerify() throws {
            let key = try ecKey()
            let publicKey = try #require(SecKeyCopyPublicKey(key))
            var error: Unmanaged<CFError>?
            let message = Data("pay 10 to bob".utf8) as CFData
            let signature = try #require(SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message, &error))
            #expect(SecKeyVerifySignature(publicKey, .ecdsaSignatureMessageX962SHA256, message, signature, &error))
            #expect(
                !SecKeyVerifySignature(
                    publicKey, .ecdsaSignatureMessageX962SHA256, Data("pay 99 to bob".utf8) as CFData, signature, &error
                ))
            #expect(status(error) == Int(errSecVerifyFailed))
            #expect(SecKeyCreateSignature(publicKey, .ecdsaSignatureMessageX962SHA256, message, &error) == nil)
            #expect(status(error) == Int(errSecParam))
            #expect(SecKeyIsAlgorithmSupported(key, .sign, .ecdsaSignatureMessageX962SHA256))
            #expect(!SecKeyIsAlgorithmSupported(publicKey, .sign, .ecdsaSignatureMessageX962SHA256))
            #expect(!SecKeyIsAlgorithmSupported(key, .sign, .rsaSignatureMessagePSSSHA256))
            #expect(!SecKeyIsAlgorithmSupported(key, .sign, .rsaSignatureRaw))
            #expect(
                SecKeyAlgorithm.eciesEncryptionCofactorVariableIVX963SHA256AESGCM.rawValue as String
                    == "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV")
        }

        @Test func attributesAndExternalRepresentationAreApples() throws {
            let key = try ecKey()
            let attributes = try #require(SecKeyCopyAttributes(key) as? [String: Any])
            #expect(attributes[kSecAttrKeyClass as String] as? String == kSecAttrKeyClassPrivate as String)
            #expect(attributes[kSecAttrKeyType as String] as? String == kSecAttrKeyTypeECSECPrimeRandom as String)
            #expect(attributes[kSecAttrKeySizeInBits as String] as? Int == 256)
            #expect(attributes[kSecAttrCanSign as String] as? Bool == true)
            #expect(attributes[kSecAttrCanVerify as String] as? Bool == false)
            var error: Unmanaged<CFError>?
            let external = try #require(SecKeyCopyExternalRepresentation(key, &error) as Data?)
            #expect(external.count == 97 && external.first == 4)
            #expect(attributes[kSecValueData as String] as? Data == external)
            let publicData = try #require(SecKeyCopyExternalRepresentation(SecKeyCopyPublicKey(key)!, &error) as Data?)
            #expect(publicData == external.prefix(65))
            #expect(SecKeyGetBlockSize(key) == 32)  // The field size, as SecECKey.c (ccec_ctx_size).

            let again = SecKeyCreateWithData(
                external as CFData,
                [kSecAttrKeyType: kSecAttrKeyTypeEC, kSecAttrKeyClass: kSecAttrKeyClassPrivate] as CFDictionary, &error)
            #expect(again == key)
            #expect(
                SecKeyCreateWithData(
                    external as CFData, [kSecAttrKeyClass: kSecAttrKeyClassPrivate] as CFDictionary, &error) == nil)
            #expect(status(error) == Int(errSecParam))
            #expect(
                SecKeyCreateWithData(
                    Data("junk".utf8) as CFData,
                    [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeyClass: kSecAttrKeyClassPublic] as CFDictionary,
                    &error) == nil)
            #expect(status(error) == Int(errSecParam))
            // SecRSAKey.c: "keyLengthInBits < 512 || keyLengthInBits > kMaximumRSAKeyBits" is errSecKeySizeNotAllowed.
            #expect(
                SecKeyCreateRandomKey(
                    [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeySizeInBits: 256] as CFDictionary, &error) == nil)
            #expect(status(error) == Int(errSecKeySizeNotAllowed))
            // A token Latchkey does not have (an ephemeral Secure Enclave key is made: SecKeyHeldTests).
            #expect(
                SecKeyCreateRandomKey(
                    [
                        kSecAttrKeyType: kSecAttrKeyTypeEC, kSecAttrKeySizeInBits: 256,
                        kSecAttrTokenID: "com.example.card",
                    ] as CFDictionary, &error) == nil)
            #expect(status(error) == Int(errSecParam))
        }

        @Test func eciesAndKeyExchangeBetweenTwoParties() throws {
            let server = try ecKey()
            let client = try ecKey()
            var error: Unmanaged<CFError>?
            let sealed = try #require(
                SecKeyCreateEncryptedData(
                    SecKeyCopyPublicKey(server)!, .eciesEncryptionCofactorVariableIVX963SHA256AESGCM,
                    Data("card 4111".utf8) as CFData, &error))
            #expect((sealed as Data).count == 65 + 9 + 16)
            #expect(
                SecKeyCreateDecryptedData(server, .eciesEncryptionCofactorVariableIVX963SHA256AESGCM, sealed, &error)
                    as Data? == Data("card 4111".utf8))
            #expect(
                SecKeyCreateDecryptedData(client, .eciesEncryptionCofactorVariableIVX963SHA256AESGCM, sealed, &error)
                    == nil)
            #expect(status(error) == Int(errSecParam))

            let parameters =
                [
                    kSecKeyKeyExchangeParameterRequestedSize as String: 32,
                    kSecKeyKeyExchangeParameterSharedInfo as String: Data("v1".utf8),
                ] as CFDictionary
            let mine =
                SecKeyCopyKeyExchangeResult(
                    client, .ecdhKeyExchangeStandardX963SHA256, SecKeyCopyPublicKey(server)!, parameters, &error)
                as Data?
            let theirs =
                SecKeyCopyKeyExchangeResult(
                    server, .ecdhKeyExchangeStandardX963SHA256, SecKeyCopyPublicKey(client)!, parameters, &error)
                as Data?
            #expect(mine != nil && mine == theirs && mine?.count == 32)
            #expect(
                SecKeyCopyKeyExchangeResult(
                    server, .ecdhKeyExchangeStandardX963SHA256, SecKeyCopyPublicKey(client)!, [:] as CFDictionary,
                    &error) == nil)
            #expect(status(error) == Int(errSecParam))
        }

        @Test func aPermanentKeyIsStoredAndFoundByReference() throws {
            let tag = Data("com.example.signing".utf8)
            let key = try ecKey([
                kSecPrivateKeyAttrs as String: [
                    kSecAttrIsPermanent as String: true, kSecAttrApplicationTag as String: tag,
                ]
            ])
            var found: CFTypeRef?
            let query: [String: Any] = [
                kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag, kSecReturnRef as String: true,
            ]
            #expect(SecItemCopyMatching(query as CFDictionary, &found) == errSecSuccess)
            #expect((found as? SecKey) == key)
            // Only the private half was permanent.
            var count: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassKey, kSecMatchLimit as String: kSecMatchLimitAll,
                        kSecReturnAttributes as String: true,
                    ] as CFDictionary, &count) == errSecSuccess)
            let items = try #require(count as? [[String: Any]])
            #expect(items.count == 1)
            #expect(items.first?[kSecAttrKeyClass as String] as? Int == 1)
            #expect(
                items.first?[kSecAttrApplicationLabel as String] as? Data
                    == SecKeyCopyAttributes(key).flatMap {
                        ($0 as? [String: Any])?[kSecAttrApplicationLabel as String] as? Data
                    })
            // Attributes and the reference together; the reference is the same key.
            var both: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    query.merging([kSecReturnAttributes as String: true]) { _, new in new } as CFDictionary, &both)
                    == errSecSuccess)
            #expect(((both as? [String: Any])?[kSecValueRef as String] as? SecKey) == key)
            // The same key again is a duplicate; deleting by reference removes it.
            #expect(
                SecItemAdd(
                    [
                        kSecClass as String: kSecClassKey, kSecValueRef as String: key,
                        kSecAttrApplicationTag as String: tag,
                    ] as CFDictionary, nil) == errSecDuplicateItem)
            #expect(
                SecItemDelete([kSecClass as String: kSecClassKey, kSecValueRef as String: key] as CFDictionary)
                    == errSecSuccess)
            #expect(SecItemCopyMatching(query as CFDictionary, &found) == errSecItemNotFound)
        }

        @Test func bothHalvesArePermanentWhenTheTopLevelSaysSo() throws {
            _ = try ecKey([kSecAttrIsPermanent as String: true, kSecAttrLabel as String: "pair"])
            var found: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassKey, kSecAttrLabel as String: "pair",
                        kSecMatchLimit as String: kSecMatchLimitAll,
                        kSecReturnRef as String: true,
                    ] as CFDictionary, &found) == errSecSuccess)
            let keys = try #require(found as? [SecKey])
            #expect(keys.count == 2)
            #expect(
                Set(keys.map { (SecKeyCopyAttributes($0) as? [String: Any])?[kSecAttrKeyClass as String] as? String })
                    == ["0", "1"])
        }

        @Test func aCertificatesKeyIsTheKeyItsPublicKeyHashNames() throws {
            let certificate = try #require(
                SecCertificateCreateWithData(nil, try CertificateFixtures.der("leaf-ec256.der") as CFData))
            let key = try #require(SecCertificateCopyKey(certificate))
            let label = (SecKeyCopyAttributes(key) as? [String: Any])?[kSecAttrApplicationLabel as String] as? Data
            #expect(SecItemAdd([kSecValueRef as String: certificate] as CFDictionary, nil) == errSecSuccess)
            var attributes: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassCertificate, kSecReturnAttributes as String: true] as CFDictionary,
                    &attributes) == errSecSuccess)
            #expect((attributes as? [String: Any])?[kSecAttrPublicKeyHash as String] as? Data == label)
            var error: Unmanaged<CFError>?
            #expect(SecKeyIsAlgorithmSupported(key, .verify, .ecdsaSignatureMessageX962SHA256))
            #expect(SecKeyCopyExternalRepresentation(key, &error).map { ($0 as Data).count } == 65)
            let root = try #require(
                SecCertificateCreateWithData(nil, try CertificateFixtures.der("root-rsa.der") as CFData))
            let rsa = try #require(SecCertificateCopyKey(root))
            #expect(SecKeyGetBlockSize(rsa) == 256)
        }

        @Test func aStoredKeyWhoseBytesAreNoKeyHasNoReference() throws {
            #expect(
                SecItemAdd(
                    [
                        kSecClass as String: kSecClassKey, kSecAttrKeyClass as String: kSecAttrKeyClassPrivate,
                        kSecAttrKeyType as String: kSecAttrKeyTypeEC,
                        kSecValueData as String: Data("not a key".utf8),
                    ] as CFDictionary, nil) == errSecSuccess)
            var found: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassKey, kSecReturnRef as String: true] as CFDictionary, &found)
                    == errSecDecode)
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassKey, kSecReturnData as String: true] as CFDictionary, &found)
                    == errSecSuccess)
            #expect(
                SecItemAdd(
                    [
                        kSecClass as String: kSecClassKey, kSecAttrKeyClass as String: kSecAttrKeyClassSymmetric,
                        kSecAttrLabel as String: "aes",
                        kSecValueData as String: Data(count: 32),
                    ] as CFDictionary, nil) == errSecSuccess)
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassKey, kSecAttrLabel as String: "aes", kSecReturnRef as String: true]
                        as CFDictionary, &found) == errSecUnimplemented)
        }
    }
}
