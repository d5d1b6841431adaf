import Foundation
import Latchkey
import LatchkeySecurity
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif


extension GlobalSecItemTests {
    /// The README's Swift examples, verbatim, run as tests; a last test checks that every ```swift block of
    /// the README appears here, so the README cannot drift from code that runs. They set the process's
    /// environment and the global SecItem configuration, so they run in the serialized group.
    @Suite(.dedicatedThreads) struct ReadmeExampleTests {
        @Test func theSwiftAPI() throws {
            let directory = TemporaryDirectory()
            setenv("LATCHKEY_KEYCHAIN", directory.file("readme.keychain"), 1)
            setenv("LATCHKEY_PASSPHRASE", "readme passphrase", 1)
            defer {
                unsetenv("LATCHKEY_KEYCHAIN")
                unsetenv("LATCHKEY_PASSPHRASE")
            }

            // README: "The Swift API"
            let keychain = Keychain(service: "com.example.mail")
            try keychain.set("hunter2", forKey: "alice@example.com")           // an atomic upsert
            let password = try keychain.string(forKey: "alice@example.com")    // nil when there is none
            try keychain.remove("alice@example.com")

            // Codable values: stored as JSON (sorted keys, dates as seconds since 2001, data as Base64).
            struct LoginInfo: Codable { var enterpriseID: String; var account: String; var password: String }
            try keychain.set(LoginInfo(enterpriseID: "jit-001", account: "alice", password: "hunter2"), forKey: "login")
            let login = try keychain.value(LoginInfo.self, forKey: "login")

            // Modifiers return copies.
            let background = keychain.accessibility(.afterFirstUnlock).label("Mail sync token")
            try background.set("token-123", forKey: "sync")
            let keys = try keychain.allKeys()                                   // ["login", "sync"]

            // Internet passwords are keyed by server, protocol, port, path, authentication type, security domain.
            let web = Keychain(server: "example.com", protocol: .https, port: 443)
            try web.set("pa55", forKey: "alice")

            #expect(password == "hunter2")
            #expect(login?.account == "alice")
            #expect(keys == ["login", "sync"])
            #expect(try web.string(forKey: "alice") == "pa55")
            #expect(FileManager.default.fileExists(atPath: directory.file("readme.keychain")))

            // README: failures
            do {
                _ = try keychain.string(forKey: "alice@example.com")
            } catch .interactionNotAllowed {
                // Locked: unlock first, or use an afterFirstUnlock item for background work.
            } catch {
                print("\(error.status.name) \(error.status.rawValue): \(error.message)")
            }
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
            assert(found[0].data == Data("hunter2".utf8))
            assert(found[0][.account] == .string("alice"))

            // Update every match (the modification date is refreshed).
            try keychain.update(ItemQuery(.genericPassword, matching: [.account: .string("alice")]),
                                with: ItemChanges(data: Data("correct-battery".utf8)), caller: mail)

            // Lock: items of the "when unlocked" family become unavailable until the next unlock.
            keychain.lock()
            do {
                _ = try keychain.copyMatching(ItemQuery(.genericPassword), caller: mail)
                assertionFailure("the item is readable while locked")
            } catch {
                assert(error.status == .interactionNotAllowed)   // errSecInteractionNotAllowed, -25308
            }
            try keychain.unlock(with: Passphrase("correct horse battery staple"))
            try keychain.delete(ItemQuery(.genericPassword, matching: [.account: .string("alice")]), caller: mail)

            // README: the dictionary layer
            let backend = DatabaseBackend(database: keychain, caller: mail)
            _ = try backend.add(["class": "genp", "svce": "api.example.com", "acct": "bot",
                                 "v_Data": Data("token-123".utf8)])
            let token = try backend.copyMatching(["class": "genp", "svce": "api.example.com", "r_Data": true]) as? Data
            assert(token == Data("token-123".utf8))

            #expect(token == Data("token-123".utf8))
            try FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path)
        }

        @Test func everyReadmeSwiftBlockIsInThisFile() throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
            let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
            let sourceLines = source.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
            #expect(!blocks.isEmpty)
            for block in blocks {
                let lines = block.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { !$0.isEmpty && !$0.hasPrefix("import ") }
                let found = sourceLines.indices.contains { start in
                    start + lines.count <= sourceLines.count
                        && Array(sourceLines[start...].filter { !$0.isEmpty }.prefix(lines.count)) == lines
                }
                #expect(found, "README block not found verbatim in ReadmeExampleTests.swift:\n\(block)")
            }
        }
    }
}
