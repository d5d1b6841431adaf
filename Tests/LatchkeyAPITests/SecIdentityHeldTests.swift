import Foundation
import Latchkey
import LatchkeySecurity
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

extension GlobalSecItemTests {
    /// Identities whose private key the keychain holds (a TLS client certificate for a key made with
    /// `kSecAttrTokenID`): the certificate is issued outside (Python's `cryptography` plays the CA), stored,
    /// and found as `kSecClassIdentity` with a reference whose key signs where it is held; made from the
    /// certificate with `SecIdentityCreateWithCertificate`; added by `kSecValueRef` (the certificate alone);
    /// deleted with its key.
    @Suite(.dedicatedThreads) struct SecIdentityHeldTests {
        let memory = InMemoryKeychain()
        init() { memory.install() }

        /// A held P-256 key, and a certificate for its public key signed by a throwaway CA.
        func heldKeyAndCertificate(commonName: String = "client.example.com") throws -> (SecKey, SecCertificate) {
            var error: Unmanaged<CFError>?
            let key = try #require(
                SecKeyCreateRandomKey(
                    [
                        kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
                        kSecAttrKeySizeInBits as String: 256,
                        kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave,
                        kSecPrivateKeyAttrs as String: [
                            kSecAttrIsPermanent as String: true, kSecAttrLabel as String: "client key",
                        ],
                    ] as CFDictionary, &error))
            let publicKey = try #require(SecKeyCopyPublicKey(key))
            let point = try #require(SecKeyCopyExternalRepresentation(publicKey, &error) as Data?)
            let der = try CertificateIssuer.issue(publicKeyPoint: point, commonName: commonName)
            return (key, try #require(SecCertificateCreateWithData(nil, der as CFData)))
        }

        func sign(_ identity: SecIdentity, _ message: Data) throws -> (SecKey, Data) {
            var key: SecKey?
            #expect(SecIdentityCopyPrivateKey(identity, &key) == errSecSuccess)
            let privateKey = try #require(key)
            var error: Unmanaged<CFError>?
            let signature = try #require(
                SecKeyCreateSignature(privateKey, .ecdsaSignatureMessageX962SHA256, message as CFData, &error) as Data?)
            return (privateKey, signature)
        }

        @Test func anIdentityWhoseKeyIsHeldIsFoundAndSignsWhereTheKeyIs() throws {
            let (key, certificate) = try heldKeyAndCertificate()
            #expect(
                SecItemAdd(
                    [kSecValueRef as String: certificate, kSecAttrLabel as String: "client"] as CFDictionary, nil)
                    == errSecSuccess)

            var found: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassIdentity, kSecReturnRef as String: true] as CFDictionary, &found)
                    == errSecSuccess)
            let identity = try #require(found as? SecIdentity)
            #expect(identity.identity == nil, "the private key is not in this process")
            #expect(identity.description == "<SecIdentity \"client.example.com\">")
            var copied: SecCertificate?
            #expect(SecIdentityCopyCertificate(identity, &copied) == errSecSuccess)
            #expect(copied == certificate)

            let message = Data("GET /account HTTP/1.1".utf8)
            let (privateKey, signature) = try sign(identity, message)
            #expect(privateKey == key)
            #expect(privateKey.asymmetricKey == nil)
            var error: Unmanaged<CFError>?
            #expect(SecKeyCopyExternalRepresentation(privateKey, &error) == nil)
            #expect(error?.takeRetainedValue().code == Int(errSecUnimplemented))
            let certificateKey = try #require(SecCertificateCopyKey(certificate))
            #expect(
                SecKeyVerifySignature(
                    certificateKey, .ecdsaSignatureMessageX962SHA256, message as CFData, signature as CFData, &error))

            // With attributes, the reference comes in the dictionary, and the data is the public key.
            var dictionary: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassIdentity, kSecReturnRef as String: true,
                        kSecReturnAttributes as String: true,
                        kSecReturnData as String: true,
                    ] as CFDictionary, &dictionary) == errSecSuccess)
            let attributes = try #require(dictionary as? [String: Any])
            #expect(attributes[kSecValueRef as String] as? SecIdentity == identity)
            #expect(attributes[kSecAttrTokenID as String] as? String == kSecAttrTokenIDSecureEnclave as String)
            #expect(
                attributes[kSecValueData as String] as? Data == SecKeyCopyExternalRepresentation(certificateKey, &error)
                    as Data?)

            // The identity of the stored certificate, made from it.
            var made: SecIdentity?
            #expect(SecIdentityCreateWithCertificate(nil, certificate, &made) == errSecSuccess)
            #expect(made == identity)
        }

        @Test func addingAHeldIdentityStoresItsCertificateAndDeletingItTakesTheKey() throws {
            let (_, certificate) = try heldKeyAndCertificate()
            // The identity of a certificate not stored: its key is found in the keychain, as on Apple's platforms.
            var made: SecIdentity?
            #expect(SecIdentityCreateWithCertificate(nil, certificate, &made) == errSecSuccess)
            let identity = try #require(made)
            #expect(
                SecItemCopyMatching([kSecClass as String: kSecClassIdentity] as CFDictionary, nil) == errSecItemNotFound
            )

            // Adding the identity adds its certificate (the key was stored when it was made); again, a duplicate.
            #expect(
                SecItemAdd([kSecValueRef as String: identity, kSecAttrLabel as String: "again"] as CFDictionary, nil)
                    == errSecSuccess)
            #expect(SecItemAdd([kSecValueRef as String: identity] as CFDictionary, nil) == errSecDuplicateItem)
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassCertificate, kSecAttrLabel as String: "again"] as CFDictionary, nil)
                    == errSecSuccess)
            _ = try sign(identity, Data("still usable".utf8))

            // Deleting the identity takes the certificate and the key no other certificate uses.
            #expect(SecItemDelete([kSecValueRef as String: identity] as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassKey] as CFDictionary, nil) == errSecItemNotFound)
            #expect(
                SecItemCopyMatching([kSecClass as String: kSecClassCertificate] as CFDictionary, nil)
                    == errSecItemNotFound)
            var key: SecKey?
            _ = SecIdentityCopyPrivateKey(identity, &key)
            var error: Unmanaged<CFError>?
            #expect(
                SecKeyCreateSignature(
                    try #require(key), .ecdsaSignatureMessageX962SHA256, Data("gone".utf8) as CFData, &error) == nil)
            #expect(error?.takeRetainedValue().code == Int(errSecItemNotFound))
        }

        @Test func aHeldKeyIsNoIdentityOfAnotherKeysCertificate() throws {
            let (_, certificate) = try heldKeyAndCertificate()
            let (other, _) = try heldKeyAndCertificate(commonName: "other.example.com")
            guard case .held(let held) = other.keyReference else {
                Issue.record("not held")
                return
            }
            #expect(throws: KeyError.self) {
                _ = try HeldIdentity(certificate: certificate.certificate, privateKey: held)
            }
        }
    }
}
