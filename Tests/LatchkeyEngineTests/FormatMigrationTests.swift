import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// Keychains made by earlier formats (committed fixtures, made by the Latchkey of their time) open, migrate
/// and read back every item exactly.
@Suite(.dedicatedThreads) struct FormatMigrationTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures").path
    static let passphrase = Passphrase("fixture passphrase")
    static let app = CallerIdentity(
        applicationIdentifier: "com.example.app", accessGroups: ["com.example.app", "com.example.shared"])

    /// A private copy of a fixture (git keeps no 0600 mode, and a test must not change the committed file).
    static func copy(_ format: String, into directory: TemporaryDirectory) throws -> String {
        let path = directory.file("login.keychain")
        for name in ["login.keychain", "login.keychain.device-key"] {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: fixtures + "/" + format + "/" + name))
            #expect(
                FileManager.default.createFile(
                    atPath: directory.file(name), contents: bytes, attributes: [.posixPermissions: 0o600]))
        }
        return path
    }

    /// Every item of the fixture, exactly.
    static func expectFixtureContents(_ keychain: KeychainDatabase) throws {
        func secret(_ service: String, _ account: String, caller: CallerIdentity = app) throws -> Data? {
            try keychain.copyMatching(
                ItemQuery(
                    .genericPassword, matching: [.service: .string(service), .account: .string(account)],
                    synchronizable: .any, returning: .data), caller: caller
            ).first?.data
        }
        #expect(try secret("mail", "alice") == Data("ak-secret".utf8))
        #expect(try secret("mail", "bob") == Data("ck-secret".utf8))
        #expect(try secret("mail", "carol") == Data("dk-secret".utf8))
        #expect(try secret("mail", "dave") == Data("aku-secret".utf8))
        #expect(try secret("shared", "erin") == Data("shared-secret".utf8))
        #expect(
            try secret("mail", "alice", caller: CallerIdentity(applicationIdentifier: "com.example.other"))
                == Data("other-group-secret".utf8))
        #expect(try secret("synced", "frank") == Data("sync-secret".utf8))
        #expect(status { _ = try secret("synced", "gone") } == .itemNotFound)
        #expect(try secret("binary", "blob") == Data([0xde, 0xad, 0xbe, 0xef]))
        let alice = try #require(
            try keychain.copyMatching(
                ItemQuery(
                    .genericPassword, matching: [.service: .string("mail"), .account: .string("alice")],
                    returning: .attributes),
                caller: app
            ).first)
        #expect(alice[.label] == .string("Mail") && alice[.comment] == .string("a comment"))
        let web = try keychain.copyMatching(
            ItemQuery(
                .internetPassword, matching: [.server: .string("example.com"), .port: .number(443)],
                returning: [.data, .attributes]),
            caller: app)
        #expect(web.map(\.data) == [Data("inet-secret".utf8)])
        #expect(web.first?[.path] == .string("/login"))
        let bulk = try keychain.copyMatching(
            ItemQuery(.genericPassword, matching: [.label: .string("Bulk 737")], returning: .data), caller: app)
        #expect(bulk.map(\.data) == [Data("bulk-secret-737".utf8)])
        #expect(
            try keychain.copyMatching(
                ItemQuery(.genericPassword, matching: [.service: .string("bulk-42")], limit: .all), caller: app
            ).count == 10)
        #expect(try keychain.settings == KeychainSettings(autoLockAfterSeconds: 300, lockOnSleep: true))
        #expect(try keychain.registeredApplications().map(\.executablePath) == ["/usr/bin/true"])
        let report = try keychain.verifyIntegrity()
        #expect(report.isHealthy, "\(report)")
        #expect(report.tombstones == 1)
        #expect(report.verified + report.tombstones == report.rows)
    }

    @Test func aFormatOneKeychainOpensAndReadsBackEveryItem() throws {
        let directory = TemporaryDirectory()
        let path = try Self.copy("format-v1", into: directory)
        let keychain = try KeychainDatabase.open(at: path)
        // Before the unlock, the device key already opens the "always" item.
        #expect(
            try keychain.copyMatching(
                ItemQuery(.genericPassword, matching: [.account: .string("carol")], returning: .data),
                caller: Self.app
            ).first?.data == Data("dk-secret".utf8))
        try keychain.unlock(with: Self.passphrase)
        try Self.expectFixtureContents(keychain)
        // Still usable for every operation afterwards.
        try keychain.add(
            NewItem(
                .genericPassword, attributes: [.service: .string("new"), .account: .string("x")], data: Data("y".utf8)),
            caller: Self.app)
        #expect(
            try keychain.delete(ItemQuery(.genericPassword, matching: [.service: .string("bulk-0")]), caller: Self.app)
                == 10)
    }
}
