import Foundation
import Latchkey
import LatchkeySecurity
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

extension GlobalSecItemTests {
    /// Identities and PKCS #12: files made by Python's `cryptography` and by `openssl` (AES, Triple DES and
    /// legacy RC2-40) open with their passphrase and refuse a wrong one; an identity is stored as its
    /// certificate and its key, found as `kSecClassIdentity` (by certificate attributes, key attributes or
    /// the certificate filters), and deleted with Apple's rule for a key another certificate still uses.
    @Suite(.dedicatedThreads) struct SecIdentityTests {
        let memory = InMemoryKeychain()
        init() { memory.install() }

        func importFile(_ name: String, passphrase: String? = "fixture p12") throws -> (OSStatus, [[String: Any]]) {
            var items: CFArray?
            let options: [String: Any] = passphrase.map { [kSecImportExportPassphrase as String: $0] } ?? [:]
            let status = SecPKCS12Import(try CertificateFixtures.der(name) as CFData, options as CFDictionary, &items)
            return (status, (items as? [[String: Any]]) ?? [])
        }

        func leafIdentity() throws -> SecIdentity {
            let (status, items) = try importFile("leaf-aes.p12")
            #expect(status == errSecSuccess)
            return try #require(items.first?[kSecImportItemIdentity as String] as? SecIdentity)
        }

        @Test(arguments: ["leaf-aes.p12", "leaf-3des.p12", "leaf-rc2.p12"])
        func pkcs12FilesOpenWithTheirPassphrase(_ name: String) throws {
            let (status, items) = try importFile(name)
            #expect(status == errSecSuccess)
            #expect(items.count == 1)
            let item = try #require(items.first)
            let identity = try #require(item[kSecImportItemIdentity as String] as? SecIdentity)
            var certificate: SecCertificate?
            #expect(SecIdentityCopyCertificate(identity, &certificate) == errSecSuccess)
            #expect(
                certificate.map { SecCertificateCopyData($0) as Data }
                    == (try CertificateFixtures.der("leaf-ec256.der")))
            var key: SecKey?
            var error: Unmanaged<CFError>?
            #expect(SecIdentityCopyPrivateKey(identity, &key) == errSecSuccess)
            #expect(
                key.flatMap { SecKeyCopyExternalRepresentation($0, &error) as Data? }
                    == (try CertificateFixtures.der("leaf-ec256.key")))
            #expect(item[kSecImportItemLabel as String] as? String == "leaf")
            let chain = try #require(item[kSecImportItemCertChain as String] as? [SecCertificate])
            let expected =
                name == "leaf-rc2.p12"
                ? ["www.example.com"] : ["www.example.com", "  issuing   authority ", "Latchkey Test Root"]
            #expect(chain.map { SecCertificateCopySubjectSummary($0) as String? } == expected)
            // The trust holds the file's chain; with the root as the anchor, the 3-certificate files evaluate as trusted.
            let trust = try #require(item[kSecImportItemTrust as String] as? SecTrust)
            #expect(SecTrustGetCertificateCount(trust) >= 1)
            let root = try #require(
                SecCertificateCreateWithData(nil, try CertificateFixtures.der("root-rsa.der") as CFData))
            #expect(SecTrustSetAnchorCertificates(trust, [root] as CFArray) == errSecSuccess)
            var trustError: CFError?
            #expect(SecTrustEvaluateWithError(trust, &trustError) == (name != "leaf-rc2.p12"))
        }

        @Test func wrongPassphrasesAndDamagedFilesGetApplesStatuses() throws {
            #expect(try importFile("leaf-aes.p12", passphrase: "wrong").0 == errSecAuthFailed)
            #expect(try importFile("leaf-rc2.p12", passphrase: "").0 == errSecAuthFailed)
            #expect(try importFile("leaf-3des.p12", passphrase: nil).0 == errSecAuthFailed)
            var items: CFArray?
            #expect(
                SecPKCS12Import(
                    Data("not pkcs12".utf8) as CFData, [kSecImportExportPassphrase as String: "x"] as CFDictionary,
                    &items) == errSecDecode)
            let file = try CertificateFixtures.der("leaf-aes.p12")
            #expect(
                SecPKCS12Import(
                    file.prefix(file.count / 2) as CFData,
                    [kSecImportExportPassphrase as String: "fixture p12"] as CFDictionary, &items) == errSecDecode)
            #expect(
                SecPKCS12Import(file as CFData, [kSecImportExportPassphrase as String: 42] as CFDictionary, &items)
                    == errSecParam)
            #expect(items == nil)
        }

        /// A server importing its users' files (issue 30, point 5): a PKCS #12 file whose key derivations ask
        /// for 2³¹−1 iterations is `errSecParam` before any derivation runs.
        @Test(arguments: ["mac.p12", "encrypted.p12", "shrouded.p12"])
        func aFileAskingForTooMuchWorkIsRefused(_ name: String) throws {
            let directory = TemporaryDirectory()
            let tools = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Tools")
            let made = try HelperProcess.run(
                "/usr/bin/python3",
                [tools.appendingPathComponent("make-costly-files.py").path, directory.path, "fixture"])
            #expect(made.status == 0, "\(made.stderr)")
            let file = try Data(contentsOf: URL(fileURLWithPath: directory.file(name)))
            var items: CFArray?
            #expect(
                SecPKCS12Import(
                    file as CFData, [kSecImportExportPassphrase as String: "fixture"] as CFDictionary, &items)
                    == errSecParam)
            #expect(items == nil)
        }

        @Test func anIdentityIsStoredAsItsCertificateAndItsKey() throws {
            let identity = try leafIdentity()
            #expect(
                SecItemAdd(
                    [kSecValueRef as String: identity, kSecAttrLabel as String: "web server"] as CFDictionary, nil)
                    == errSecSuccess)
            #expect(SecItemAdd([kSecValueRef as String: identity] as CFDictionary, nil) == errSecDuplicateItem)
            var found: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassIdentity, kSecAttrLabel as String: "web server",
                        kSecReturnRef as String: true,
                    ] as CFDictionary, &found) == errSecSuccess)
            #expect((found as? SecIdentity) == identity)
            // Both halves are items of their own classes, under the same label.
            for itemClass in [kSecClassCertificate, kSecClassKey] {
                #expect(
                    SecItemCopyMatching(
                        [kSecClass as String: itemClass, kSecAttrLabel as String: "web server"] as CFDictionary, nil)
                        == errSecSuccess)
            }
            // Found by a key attribute, by the certificate filters, and with attributes.
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassIdentity, kSecAttrKeyType as String: kSecAttrKeyTypeEC]
                        as CFDictionary, nil) == errSecSuccess)
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassIdentity, kSecAttrKeyType as String: kSecAttrKeyTypeRSA]
                        as CFDictionary, nil) == errSecItemNotFound)
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassIdentity, kSecMatchSubjectContains as String: "www"] as CFDictionary,
                    nil) == errSecSuccess)
            // An identity search with an item list: the identity, its certificate, or its persistent reference names it.
            var listedCertificate: SecCertificate?
            #expect(SecIdentityCopyCertificate(identity, &listedCertificate) == errSecSuccess)
            var identityReference: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassIdentity, kSecReturnPersistentRef as String: true] as CFDictionary,
                    &identityReference) == errSecSuccess)
            for listed: Any in [identity, try #require(listedCertificate), try #require(identityReference as? Data)] {
                var one: CFTypeRef?
                #expect(
                    SecItemCopyMatching(
                        [
                            kSecClass as String: kSecClassIdentity, kSecMatchItemList as String: [listed],
                            kSecReturnRef as String: true,
                        ] as CFDictionary, &one) == errSecSuccess)
                #expect((one as? SecIdentity) == identity)
            }
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassIdentity, kSecMatchItemList as String: [Data("other".utf8)]]
                        as CFDictionary, nil)
                    == errSecItemNotFound)
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassIdentity, kSecMatchItemList as String: [identity],
                        kSecMatchSubjectStartsWith as String: "api.",
                    ] as CFDictionary, nil) == errSecItemNotFound)
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassIdentity, kSecMatchItemList as String: [3]] as CFDictionary, nil)
                    == errSecParam)
            // An identity in an item list stands for its certificate in a certificate search, and for its key in a key search.
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassCertificate, kSecMatchItemList as String: [identity]]
                        as CFDictionary, nil)
                    == errSecSuccess)
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassKey, kSecMatchItemList as String: [identity]] as CFDictionary, nil)
                    == errSecSuccess)
            // macOS's common-name filters, as code that looks up "Developer ID Application: …" identities uses them.
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassIdentity, kSecMatchSubjectStartsWith as String: "www."]
                        as CFDictionary, nil) == errSecSuccess)
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassIdentity, kSecMatchSubjectStartsWith as String: "api."]
                        as CFDictionary, nil)
                    == errSecItemNotFound)
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassIdentity,
                        kSecMatchSubjectWholeString as String: "WWW.EXAMPLE.COM",
                        kSecMatchCaseInsensitive as String: true,
                    ] as CFDictionary, nil) == errSecSuccess)
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassIdentity,
                        kSecMatchPolicy as String: SecPolicyCreateSSL(true, "www.example.com" as CFString),
                    ]
                        as CFDictionary, nil) == errSecSuccess)
            #expect(
                SecItemCopyMatching(
                    [
                        kSecClass as String: kSecClassIdentity,
                        kSecMatchPolicy as String: SecPolicyCreateSSL(true, "api.example.net" as CFString),
                    ]
                        as CFDictionary, nil) == errSecItemNotFound)
            var attributes: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassIdentity, kSecReturnAttributes as String: true] as CFDictionary,
                    &attributes) == errSecSuccess)
            let dictionary = try #require(attributes as? [String: Any])
            #expect(dictionary[kSecClass as String] as? String == "idnt")
            #expect(dictionary[kSecAttrKeyClass as String] as? Int == 1)
            #expect(dictionary[kSecAttrLabel as String] as? String == "web server")
            #expect(
                dictionary[kSecAttrPublicKeyHash as String] as? Data == dictionary[kSecAttrApplicationLabel as String]
                    as? Data)
            // The identity of a stored certificate, from the keychain.
            var made: SecIdentity?
            var certificate: SecCertificate?
            _ = SecIdentityCopyCertificate(identity, &certificate)
            #expect(SecIdentityCreateWithCertificate(nil, certificate!, &made) == errSecSuccess)
            #expect(made == identity)
            let stranger = try #require(
                SecCertificateCreateWithData(nil, try CertificateFixtures.der("root-rsa.der") as CFData))
            #expect(SecIdentityCreateWithCertificate(nil, stranger, &made) == errSecItemNotFound)
            // Updating an identity as such is not offered.
            #expect(
                SecItemUpdate(
                    [kSecClass as String: kSecClassIdentity] as CFDictionary,
                    [kSecAttrLabel as String: "x"] as CFDictionary) == errSecUnimplemented)
        }

        @Test func aCertificateWithoutItsKeyIsNoIdentity() throws {
            #expect(
                SecItemAdd(
                    [
                        kSecValueRef as String: SecCertificateCreateWithData(
                            nil, try CertificateFixtures.der("leaf-ec256.der") as CFData)!
                    ] as CFDictionary, nil) == errSecSuccess)
            #expect(
                SecItemCopyMatching([kSecClass as String: kSecClassIdentity] as CFDictionary, nil) == errSecItemNotFound
            )
            #expect(SecItemDelete([kSecClass as String: kSecClassIdentity] as CFDictionary) == errSecItemNotFound)
        }

        @Test func deletingAnIdentityKeepsAKeyAnotherCertificateUses() throws {
            let identity = try leafIdentity()
            #expect(SecItemAdd([kSecValueRef as String: identity] as CFDictionary, nil) == errSecSuccess)
            // A second certificate for the same key (its key hash given, as a renewed certificate would have).
            var certificate: SecCertificate?
            _ = SecIdentityCopyCertificate(identity, &certificate)
            let hash = try #require(
                SecCertificateCopyKey(certificate!).flatMap {
                    (SecKeyCopyAttributes($0) as? [String: Any])?[kSecAttrApplicationLabel as String] as? Data
                })
            #expect(
                SecItemAdd(
                    [
                        kSecClass as String: kSecClassCertificate,
                        kSecValueData as String: try CertificateFixtures.der("email-only.der"),
                        kSecAttrPublicKeyHash as String: hash,
                    ] as CFDictionary, nil) == errSecSuccess)
            #expect(SecItemDelete([kSecValueRef as String: identity] as CFDictionary) == errSecSuccess)
            #expect(
                SecItemCopyMatching([kSecClass as String: kSecClassKey] as CFDictionary, nil) == errSecSuccess,
                "the key is still in use")
            // The other certificate with the key is now the only identity; deleting it takes the key too.
            var left: CFTypeRef?
            #expect(
                SecItemCopyMatching(
                    [kSecClass as String: kSecClassIdentity, kSecReturnAttributes as String: true] as CFDictionary,
                    &left) == errSecSuccess)
            #expect((left as? [String: Any])?[kSecAttrLabel as String] as? String == "alice@example.org")
            #expect(SecItemDelete([kSecClass as String: kSecClassIdentity] as CFDictionary) == errSecSuccess)
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassKey] as CFDictionary, nil) == errSecItemNotFound)
            #expect(
                SecItemCopyMatching([kSecClass as String: kSecClassCertificate] as CFDictionary, nil)
                    == errSecItemNotFound)
        }
    }
}
