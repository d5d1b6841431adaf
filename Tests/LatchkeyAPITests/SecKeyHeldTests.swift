import Foundation
import Latchkey
import LatchkeySecurity
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

extension GlobalSecItemTests {
    /// SecKey for keys the keychain holds, made as Apple code makes Secure Enclave keys: `kSecAttrTokenID`
    /// (or `kSecAttrIsExtractable` false) with a permanent private half. The key signs, decrypts and derives
    /// through the keychain, is found again by reference, reports Apple's token-key attributes, and is never
    /// exported.
    @Suite(.dedicatedThreads) struct SecKeyHeldTests {
        let memory = InMemoryKeychain()
        init() { memory.install() }

        static let tag = Data("com.example.enclave".utf8)

        func status(_ error: Unmanaged<CFError>?) -> Int? { error?.takeRetainedValue().code }

        func enclaveKey(_ privateAttributes: [String: Any] = [:], top: [String: Any] = [:]) -> (SecKey?, Int?) {
            var error: Unmanaged<CFError>?
            let parameters: [String: Any] = [
                kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256,
                kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave,
                kSecPrivateKeyAttrs as String:
                    ([kSecAttrIsPermanent as String: true, kSecAttrApplicationTag as String: Self.tag] as [String: Any])
                    .merging(privateAttributes) { _, new in new },
            ].merging(top) { _, new in new }
            let key = SecKeyCreateRandomKey(parameters as CFDictionary, &error)
            return (key, status(error))
        }

        @Test func aSecureEnclaveStyleKeyIsMadeUsedAndFoundButNeverExported() throws {
            let (made, failure) = enclaveKey()
            #expect(failure == nil)
            let key = try #require(made)
            #expect(key.asymmetricKey == nil)
            #expect(key.description.hasPrefix("<SecKey EC private key, 256 bits, held by com.apple.setoken>"))
            let publicKey = try #require(SecKeyCopyPublicKey(key))

            var error: Unmanaged<CFError>?
            let message = Data("transfer 10".utf8) as CFData
            let signature = try #require(SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message, &error))
            #expect(SecKeyVerifySignature(publicKey, .ecdsaSignatureMessageX962SHA256, message, signature, &error))
            #expect(SecKeyVerifySignature(key, .ecdsaSignatureMessageX962SHA256, message, signature, &error))

            let ciphertext = try #require(
                SecKeyCreateEncryptedData(
                    publicKey, .eciesEncryptionCofactorVariableIVX963SHA256AESGCM,
                    Data("to the enclave".utf8) as CFData, &error))
            #expect(
                SecKeyCreateDecryptedData(key, .eciesEncryptionCofactorVariableIVX963SHA256AESGCM, ciphertext, &error)
                    as Data?
                    == Data("to the enclave".utf8))

            let peer = try #require(
                SecKeyCreateRandomKey(
                    [
                        kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
                        kSecAttrKeySizeInBits as String: 256,
                    ] as CFDictionary, &error))
            let parameters = [kSecKeyKeyExchangeParameterRequestedSize as String: 32] as CFDictionary
            let ours =
                SecKeyCopyKeyExchangeResult(
                    key, .ecdhKeyExchangeStandardX963SHA256, SecKeyCopyPublicKey(peer)!, parameters, &error) as Data?
            let theirs =
                SecKeyCopyKeyExchangeResult(peer, .ecdhKeyExchangeStandardX963SHA256, publicKey, parameters, &error)
                as Data?
            #expect(ours != nil && ours == theirs)

            // Never exported; its attributes are a token key's.
            #expect(SecKeyCopyExternalRepresentation(key, &error) == nil)
            #expect(status(error) == Int(errSecUnimplemented))
            let attributes = try #require(SecKeyCopyAttributes(key) as? [String: Any])
            #expect(attributes[kSecAttrTokenID as String] as? String == "com.apple.setoken")
            #expect(attributes[kSecAttrKeyClass as String] as? String == kSecAttrKeyClassPrivate as String)
            #expect(attributes[kSecAttrIsExtractable as String] as? Bool == false)
            #expect(attributes[kSecAttrIsSensitive as String] as? Bool == true)
            #expect(attributes[kSecAttrCanSign as String] as? Bool == true)
            #expect(attributes[kSecValueData as String] == nil)
            #expect(SecKeyIsAlgorithmSupported(key, .sign, .ecdsaSignatureMessageX962SHA256))
            #expect(!SecKeyIsAlgorithmSupported(key, .sign, .rsaSignatureMessagePSSSHA256))
            #expect(SecKeyGetBlockSize(key) == 32)  // The field size, as SecECKey.c (ccec_ctx_size).

            // Found again by its tag: the same key, which signs; its data is the public key.
            let query: [String: Any] = [
                kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Self.tag,
                kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave, kSecReturnRef as String: true,
            ]
            var found: CFTypeRef?
            #expect(SecItemCopyMatching(query as CFDictionary, &found) == errSecSuccess)
            let again = try #require(found as? SecKey)
            #expect(again == key)
            #expect(SecKeyCreateSignature(again, .ecdsaSignatureMessageX962SHA256, message, &error) != nil)
            var data: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Self.tag,
                        kSecReturnData as String: true,
                    ] as CFDictionary, &data) == errSecSuccess)
            #expect(data as? Data == SecKeyCopyExternalRepresentation(publicKey, &error) as Data?)

            // It is in the keychain already; deleted by reference, it is gone and can no longer sign.
            #expect(
                SecItemAdd([kSecClass as String: kSecClassKey, kSecValueRef as String: key] as CFDictionary, nil)
                    == errSecDuplicateItem)
            #expect(
                SecItemDelete([kSecClass as String: kSecClassKey, kSecValueRef as String: key] as CFDictionary)
                    == errSecSuccess)
            #expect(SecItemCopyMatching(query as CFDictionary, &found) == errSecItemNotFound)
            #expect(SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message, &error) == nil)
            #expect(status(error) == Int(errSecItemNotFound))
        }

        @Test func aNonExtractableKeyIsHeldTooAndItsPublicHalfMayBeStored() throws {
            var error: Unmanaged<CFError>?
            let made = SecKeyCreateRandomKey(
                [
                    kSecAttrKeyType as String: kSecAttrKeyTypeRSA, kSecAttrKeySizeInBits as String: 2048,
                    kSecAttrLabel as String: "signing",
                    kSecPrivateKeyAttrs as String: [
                        kSecAttrIsPermanent as String: true, kSecAttrIsExtractable as String: false,
                    ],
                    kSecPublicKeyAttrs as String: [kSecAttrIsPermanent as String: true],
                ] as CFDictionary, &error)
            #expect(status(error) == nil)
            let key = try #require(made)
            #expect(
                SecKeyCopyAttributes(key).flatMap { ($0 as? [String: Any])?[kSecAttrTokenID as String] as? String }
                    == "com.latchkey.agent")
            let signature = try #require(
                SecKeyCreateSignature(key, .rsaSignatureMessagePSSSHA256, Data("m".utf8) as CFData, &error))
            var found: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassKey, kSecAttrLabel as String: "signing",
                        kSecMatchLimit as String: kSecMatchLimitAll,
                        kSecReturnRef as String: true,
                    ] as CFDictionary, &found) == errSecSuccess)
            let keys = try #require(found as? [SecKey])
            #expect(keys.count == 2)
            let stored = try #require(keys.first { $0.asymmetricKey != nil })
            #expect(stored == SecKeyCopyPublicKey(key))
            #expect(
                SecKeyVerifySignature(
                    stored, .rsaSignatureMessagePSSSHA256, Data("m".utf8) as CFData, signature, &error))
        }

        /// SecItem.c's `SecTokenItemAdd` stores a token's key with the token's own ACL whatever class the caller
        /// gives: a Secure Enclave key with `kSecAttrAccessibleAfterFirstUnlock` in its access control is made
        /// (as CertificateSigningRequest's suite makes one), and kept as `…AfterFirstUnlockThisDeviceOnly`.
        @Test func anEnclaveKeyOfAClassThatCouldLeaveIsKeptOnThisDevice() throws {
            let control = try #require(
                SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlock, .privateKeyUsage, nil))
            // With a kSecAttrAccessible beside it, as the suite gives (the token takes the control; no conflict).
            let (key, failure) = enclaveKey([
                kSecAttrAccessControl as String: control,
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlock,
            ])
            #expect(failure == nil)
            let madeKey = try #require(key)
            let attributes = try #require(SecKeyCopyAttributes(madeKey) as? [String: Any])
            #expect(attributes[kSecAttrTokenID as String] as? String == kSecAttrTokenIDSecureEnclave as String)
            var found: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Self.tag,
                        kSecReturnAttributes as String: true,
                    ] as CFDictionary, &found) == errSecSuccess)
            let stored = try #require(found as? [String: Any])
            #expect(
                stored[kSecAttrAccessible as String] as? String == kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
                    as String)
        }

        @Test func wrongRequestsAreRefusedWithApplesStatuses() throws {
            // A token Latchkey does not have.
            #expect(enclaveKey(top: [kSecAttrTokenID as String: "com.example.smartcard"]).1 == Int(errSecParam))
            // A size the type does not have.
            #expect(enclaveKey(top: [kSecAttrKeySizeInBits as String: 255]).1 == Int(errSecParam))
            // None of them stored anything.
            var found: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassKey, kSecMatchLimit as String: kSecMatchLimitAll] as CFDictionary,
                    &found)
                    == errSecItemNotFound)
        }

        @Test func anEphemeralEnclaveKeyIsHeldUsedAndNeverStored() throws {
            // No kSecAttrIsPermanent (Apple's default, false): an ephemeral Secure Enclave key.
            var error: Unmanaged<CFError>?
            let key = try #require(
                SecKeyCreateRandomKey(
                    [
                        kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
                        kSecAttrKeySizeInBits as String: 256,
                        kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave,
                    ] as CFDictionary, &error))
            #expect(error == nil)
            #expect(key.asymmetricKey == nil)
            #expect(key.description == "<SecKey EC private key, 256 bits, held by com.apple.setoken>")
            let message = Data("session".utf8) as CFData
            let signature = try #require(SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message, &error))
            #expect(
                SecKeyVerifySignature(
                    try #require(SecKeyCopyPublicKey(key)), .ecdsaSignatureMessageX962SHA256, message, signature, &error
                ))
            // ECDH with a peer, as ephemeral enclave keys are used.
            let peer = try #require(
                SecKeyCreateRandomKey(
                    [
                        kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
                        kSecAttrKeySizeInBits as String: 256,
                    ] as CFDictionary, &error))
            let peerPublic = try #require(SecKeyCopyPublicKey(peer))
            let keyPublic = try #require(SecKeyCopyPublicKey(key))
            let shared = try #require(
                SecKeyCopyKeyExchangeResult(key, .ecdhKeyExchangeStandard, peerPublic, [:] as CFDictionary, &error)
                    as Data?)
            #expect(
                shared == SecKeyCopyKeyExchangeResult(
                    peer, .ecdhKeyExchangeStandard, keyPublic, [:] as CFDictionary, &error) as Data?)
            #expect(SecKeyCopyExternalRepresentation(key, &error) == nil)
            #expect(status(error) == Int(errSecUnimplemented))
            // Nothing stored.
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassKey, kSecMatchLimit as String: kSecMatchLimitAll] as CFDictionary,
                    nil)
                    == errSecItemNotFound)
            // Locking destroys it: refused while locked, gone after.
            memory.lock()
            #expect(SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message, &error) == nil)
            #expect(status(error) == Int(errSecInteractionNotAllowed))
            memory.unlock()
            #expect(SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message, &error) == nil)
            #expect(status(error) == Int(errSecItemNotFound))
        }

        /// Apple frees a non-permanent key when its `SecKey` is released: so does the keychain here.
        @Test func anEphemeralKeyGoesWithItsSecKey() throws {
            var error: Unmanaged<CFError>?
            var handle = Data()
            do {
                let key = try #require(
                    SecKeyCreateRandomKey(
                        [
                            kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
                            kSecAttrKeySizeInBits as String: 256,
                            kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave,
                        ] as CFDictionary, &error))
                guard case .held(let held) = key.keyReference else {
                    Issue.record("not a held key: \(key)")
                    return
                }
                handle = held.persistentReference
                #expect(
                    SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, Data("m".utf8) as CFData, &error)
                        != nil)
                let service = memory.connection.service(accessGroups: [])
                _ = try service.useHeldKey(
                    handle, for: .sign(KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256"), Data("m".utf8)))
            }
            HeldKeyReleases.waitForPendingReleases()
            let service = memory.connection.service(accessGroups: [])
            do throws(KeychainError) {
                _ = try service.useHeldKey(
                    handle, for: .sign(KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256"), Data("m".utf8)))
                Issue.record("the key outlived its SecKey")
            } catch {
                #expect(error.status == .itemNotFound)
            }
        }
    }
}
