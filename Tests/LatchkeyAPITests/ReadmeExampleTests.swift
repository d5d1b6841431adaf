// swift-format-ignore-file
// (Its code is the README's examples, kept as the README prints them: a test finds each README block here verbatim.)
import Foundation
import Latchkey
import LatchkeySecurity
import LatchkeyTestSupport
import LatchkeyTesting
import Testing


extension GlobalSecItemTests {
    /// The README's Swift examples, verbatim, run as tests (those on the default connection in the helper,
    /// with an environment of their own); a last test checks that every ```swift block of the README appears
    /// here or there, so the README cannot drift from code that runs. They set the global SecItem
    /// configuration, so they run in the serialized group.
    @Suite(.dedicatedThreads) struct ReadmeExampleTests {
        /// The environment for the helper that runs the "Swift API" examples: its own keychain, no agent.
        func exampleEnvironment(_ directory: TemporaryDirectory, passphrase: Bool = true) -> [String: String] {
            var environment = [
                "HOME": directory.path, "PATH": "/usr/bin:/bin", "LATCHKEY_KEYCHAIN": directory.file("readme.keychain"),
                "LATCHKEY_AGENT_SOCKET": directory.file("run/agent.sock"),
            ]
            if passphrase { environment["LATCHKEY_PASSPHRASE"] = "readme passphrase" }
            return environment
        }

        @Test func theSwiftAPI() throws {
            // The examples use the default connection, configured by the environment: they run in the
            // helper (Tests/Helpers/latchkey-test-helper/ReadmeExamples.swift) with an environment of their
            // own, never by changing this process's.
            let directory = TemporaryDirectory()
            let output = try HelperProcess.run(["readme-swift-api"], environment: exampleEnvironment(directory))
            #expect(output.status == 0)
            #expect(output.stderr == "")
            #expect(output.stdout == "hunter2\nalice\n[\"login\", \"sync\"]\n")
            #expect(FileManager.default.fileExists(atPath: directory.file("readme.keychain")), "the first use created the keychain")
            let state = try HelperProcess.run(["readme-swift-api-state"], environment: exampleEnvironment(directory))
            #expect(state.stdout == """
                after remove <nil>
                login {"account":"alice","enterpriseID":"jit-001","password":"hunter2"}
                sync token-123 Mail sync token
                web pa55

                """, "\(state.stderr)")
        }

        /// Without a passphrase and without a terminal, the README's program says the keychain is locked and
        /// exits normally — no trap at the top level; another failure prints its status and message.
        @Test func theExampleHandlesEachFailure() throws {
            let directory = TemporaryDirectory()
            #expect(try HelperProcess.run(["readme-swift-api"], environment: exampleEnvironment(directory)).status == 0)
            // No passphrase and (in a session of its own) no terminal to ask on: the keychain stays locked.
            let locked = try HelperProcess.run(["readme-swift-api"], environment: exampleEnvironment(directory, passphrase: false))
            #expect(locked.status == 0)
            #expect(locked.stdout == "the keychain is locked\n", "\(locked.stderr)")
            #expect(locked.stderr == "")
            // A keychain file others may read: any other failure, with its status and message.
            let path = directory.file("readme.keychain")
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
            let refused = try HelperProcess.run(["readme-swift-api"], environment: exampleEnvironment(directory))
            #expect(refused.status == 0)
            #expect(refused.stdout == "errSecWrPerm -61: Write permissions error. (keychain file \(path) is readable by others "
                + "(mode 0644); run chmod 600 on it)\n")
        }

        @Test func latchkeySecurity() throws {
            InMemoryKeychain().install()
            // README: "LatchkeySecurity"
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: "com.example.app",
                kSecAttrAccount as String: "token",
                kSecValueData as String: Data("secret-token".utf8),
            ]
            var status = SecItemAdd(query as CFDictionary, nil)

            var item: CFTypeRef?
            status = SecItemCopyMatching([
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: "com.example.app",
                kSecReturnData as String: kCFBooleanTrue!,
                kSecMatchLimit as String: kSecMatchLimitOne,
            ] as CFDictionary, &item)
            let token = item as? Data
            print(SecCopyErrorMessageString(status, nil) ?? "")

            #expect(status == errSecSuccess)
            #expect(token == Data("secret-token".utf8))
        }

        @Test func latchkeySecurityAccessControl() throws {
            InMemoryKeychain().install()
            // README: "LatchkeySecurity", access control
            let protected = SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked, .userPresence, nil)!
            SecItemAdd([
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrAccount as String: "bank-pin",
                kSecValueData as String: Data("4321".utf8),
                kSecAttrAccessControl as String: protected,
            ] as CFDictionary, nil)

            var pin: CFTypeRef?
            let answer = SecItemCopyMatching([
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrAccount as String: "bank-pin",
                kSecReturnData as String: true,
                kSecUseOperationPrompt as String: "Show the card's PIN",
            ] as CFDictionary, &pin)

            // The in-memory keychain has nobody to ask.
            #expect(answer == errSecInteractionNotAllowed)
            #expect(pin == nil)
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "bank-pin"] as CFDictionary, nil)
                == errSecSuccess, "the item is there")
        }

        @Test func latchkeySecurityCertificates() throws {
            InMemoryKeychain().install()
            let der = try CertificateFixtures.der("leaf-ec256.der")
            // README: "LatchkeySecurity", certificates
            let server = SecCertificateCreateWithData(nil, der as CFData)!
            SecItemAdd([kSecClass as String: kSecClassCertificate, kSecValueRef as String: server] as CFDictionary, nil)

            var found: CFTypeRef?
            SecItemCopyMatching([
                kSecClass as String: kSecClassCertificate,
                kSecMatchSubjectContains as String: "example.com",
                kSecMatchValidOnDate as String: Date(),
                kSecReturnRef as String: true,
            ] as CFDictionary, &found)
            let certificate = found as! SecCertificate
            print(SecCertificateCopySubjectSummary(certificate) ?? "")

            #expect(certificate == server)
            #expect(SecCertificateCopySubjectSummary(certificate) as String? == "www.example.com")
        }

        @Test func latchkeySecurityKeys() throws {
            InMemoryKeychain().install()
            // README: "LatchkeySecurity", keys
            var error: Unmanaged<CFError>?
            let serverKey = SecKeyCreateRandomKey([
                kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
                kSecAttrKeySizeInBits as String: 256,
                kSecPrivateKeyAttrs as String: [kSecAttrIsPermanent as String: true, kSecAttrApplicationTag as String: Data("server".utf8)],
            ] as CFDictionary, &error)!

            let sealed = SecKeyCreateEncryptedData(SecKeyCopyPublicKey(serverKey)!, .eciesEncryptionCofactorVariableIVX963SHA256AESGCM,
                                                   Data("card 4111".utf8) as CFData, &error)!
            let opened = SecKeyCreateDecryptedData(serverKey, .eciesEncryptionCofactorVariableIVX963SHA256AESGCM, sealed, &error) as Data?

            #expect(opened == Data("card 4111".utf8))
            var stored: CFTypeRef?
            #expect(SecItemCopyMatching([kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Data("server".utf8),
                                         kSecReturnRef as String: true] as CFDictionary, &stored) == errSecSuccess)
            #expect((stored as? SecKey) == serverKey)

            // README: "LatchkeySecurity", a key the keychain holds
            let deviceKey = SecKeyCreateRandomKey([
                kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
                kSecAttrKeySizeInBits as String: 256,
                kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave,
                kSecPrivateKeyAttrs as String: [kSecAttrIsPermanent as String: true, kSecAttrApplicationTag as String: Data("device".utf8)],
            ] as CFDictionary, &error)!
            let signature = SecKeyCreateSignature(deviceKey, .ecdsaSignatureMessageX962SHA256, Data("challenge".utf8) as CFData, &error)!
            let exported = SecKeyCopyExternalRepresentation(deviceKey, &error)   // nil: the key never leaves the keychain

            #expect(exported == nil)
            #expect(error?.takeRetainedValue().code == Int(errSecUnimplemented))
            #expect(SecKeyVerifySignature(SecKeyCopyPublicKey(deviceKey)!, .ecdsaSignatureMessageX962SHA256, Data("challenge".utf8) as CFData,
                                          signature, nil))
        }

        @Test func latchkeyTesting() throws {
            // README: "LatchkeyTesting"
            let memory = InMemoryKeychain()                       // no file, no passphrase, well under a millisecond
            let keychain = memory.keychain(service: "com.example.api")
            try keychain.set("token", forKey: "alice")
            memory.lock()                                         // exercise your locked-keychain path
            // try keychain.string(forKey: "alice") now throws KeychainFailure.interactionNotAllowed
            memory.unlock()
            memory.install()                                      // the global SecItem functions use it too

            #expect(try keychain.string(forKey: "alice") == "token")
        }

        @Test func usingTheEngine() throws {
            // README: "Using the engine"
            let path = NSTemporaryDirectory() + "/readme-\(UUID().uuidString)/login.keychain"
            let keychain = try KeychainDatabase.create(at: path, passphrase: Passphrase("correct horse battery staple"))
            let mail = CallerIdentity(applicationIdentifier: "com.example.mail")

            // Add: the item goes to the caller's first access group, accessibility "when unlocked".
            try keychain.add(NewItem(.genericPassword,
                                     attributes: [.service: .string("imap.example.com"), .account: .string("alice")],
                                     data: Data("hunter2".utf8)),
                             caller: mail)

            // Find: exact match on any attributes; ask for the data, the attributes, or both.
            let found = try keychain.copyMatching(
                ItemQuery(.genericPassword, matching: [.service: .string("imap.example.com")], returning: [.data, .attributes]),
                caller: mail)
            let secret = found.first?.data          // Data("hunter2".utf8)
            let account = found.first?[.account]    // .string("alice")

            // Update every match (the modification date is refreshed).
            try keychain.update(ItemQuery(.genericPassword, matching: [.account: .string("alice")]),
                                with: ItemChanges(data: Data("correct-battery".utf8)), caller: mail)

            // Lock: items of the "when unlocked" family become unavailable until the next unlock.
            keychain.lock()
            let whileLocked = Result { try keychain.copyMatching(ItemQuery(.genericPassword), caller: mail) }
            // whileLocked is a failure: errSecInteractionNotAllowed (-25308)
            try keychain.unlock(with: Passphrase("correct horse battery staple"))
            try keychain.delete(ItemQuery(.genericPassword, matching: [.account: .string("alice")]), caller: mail)

            // README: the dictionary layer
            let backend = DatabaseBackend(database: keychain, caller: mail)
            _ = try backend.add(["class": "genp", "svce": "api.example.com", "acct": "bot",
                                 "v_Data": Data("token-123".utf8)])
            let token = try backend.copyMatching(["class": "genp", "svce": "api.example.com", "r_Data": true]) as? Data
            // token == Data("token-123".utf8)

            // README: the typed seam and the change feed
            // The typed seam: the agent, the embedded keychain and LocalKeychainService implement it alike.
            let service: any KeychainService = LocalKeychainService(database: keychain, caller: mail)
            let item = NewItem(.genericPassword, attributes: [.service: .string("feed"), .account: .string("bob")],
                               data: Data("v1".utf8))
            _ = try service.add(item, returning: [])

            // Errors match by status.
            var outcome = ""
            do {
                _ = try service.add(item, returning: [])
            } catch KeychainError.duplicateItem {
                outcome = "already stored"
            } catch {
                outcome = "failed: \(error)"
            }

            // The change feed: every mutation, in commit order, across processes (for sync, caches, signals).
            let recent = try keychain.changes(after: 0)
            let kinds = recent.map(\.kind)            // [.added, .updated, .deleted, .added, .added]
            let resumeAfter = try keychain.lastChangeSequence

            #expect(outcome == "already stored")
            #expect(kinds == [.added, .updated, .deleted, .added, .added])
            #expect(resumeAfter == recent.last?.sequence)
            #expect(try service.copyMatching(ItemQuery(.genericPassword, matching: [.account: .string("bob")], returning: .data))
                .map(\.data) == [Data("v1".utf8)])
            #expect(secret == Data("hunter2".utf8))
            #expect(account == .string("alice"))
            #expect(throws: KeychainError(.interactionNotAllowed, "items of accessibility ak are unavailable while the keychain is locked")) {
                try whileLocked.get()
            }
            #expect(status { _ = try keychain.copyMatching(ItemQuery(.genericPassword, matching: [.account: .string("alice")]), caller: mail) }
                == .itemNotFound, "the delete above removed it")
            #expect(token == Data("token-123".utf8))
            try FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        }

        @Test func everyReadmeSwiftBlockIsRunByATest() throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
            let sources = [#filePath, root.appendingPathComponent("Tests/Helpers/latchkey-test-helper/ReadmeExamples.swift").path]
            let sourceLines = try sources.flatMap { try String(contentsOfFile: $0, encoding: .utf8).split(separator: "\n") }
                .map { $0.trimmingCharacters(in: .whitespaces) }
            let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
            #expect(!blocks.isEmpty)
            // A package manifest is not code to run: ReadmePackageManifestTests has SwiftPM load it.
            for block in blocks where !block.contains("import PackageDescription") {
                let lines = block.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { !$0.isEmpty && !$0.hasPrefix("import ") }
                let found = sourceLines.indices.contains { start in
                    start + lines.count <= sourceLines.count
                        && Array(sourceLines[start...].filter { !$0.isEmpty }.prefix(lines.count)) == lines
                }
                #expect(found, "README block not found verbatim in ReadmeExampleTests.swift or ReadmeExamples.swift:\n\(block)")
            }
        }
    }
}
