import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// The README's Swift examples, verbatim, run as tests; a second test checks that every ```swift block of
/// the README appears here, so the README cannot drift from code that runs.
@Suite struct ReadmeExampleTests {
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
