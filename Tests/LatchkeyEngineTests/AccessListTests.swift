import Foundation
import Latchkey
import LatchkeyEngine
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

/// Items' access lists (format v6, `item_access`): entries added, listed and removed; sealed, so a row moved
/// to another item, given another program's digest or damaged does not count; gone with the item (deleted
/// or tombstoned), kept across updates; readable only after the first unlock; a v5 file gains the tables.
@Suite struct AccessListTests {
    let directory = TemporaryDirectory()
    static let tool = TrustedProgram.executable(path: "/usr/bin/tool", digest: Data(repeating: 7, count: 32))
    static let rebuiltTool = TrustedProgram.executable(path: "/usr/bin/tool", digest: Data(repeating: 8, count: 32))
    static let app = TrustedProgram.sandbox(appID: "org.example.App")
    static let confined = TrustedProgram.confined(label: "apparmor:tool")

    func keychainWithItems() throws -> (KeychainDatabase, mail: Data, web: Data) {
        let keychain = try Fixture.newKeychain(in: directory)
        let mail = try #require(
            try keychain.add(
                Fixture.password(service: "mail", account: "alice"), caller: Fixture.app, returning: .reference)?
                .persistentReference)
        let web = try #require(
            try keychain.add(
                Fixture.password(service: "web", account: "bob"), caller: Fixture.other, returning: .reference)?
                .persistentReference)
        return (keychain, mail, web)
    }

    @Test func entriesAreAddedListedAndRemoved() throws {
        let (keychain, mail, web) = try keychainWithItems()
        #expect(try keychain.accessList(of: mail).isEmpty)
        let added = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(try keychain.grantAccess(to: Self.tool, onItem: mail, origin: .command, at: added))
        #expect(try keychain.grantAccess(to: Self.tool, onItem: mail, origin: .answer) == false, "already listed")
        #expect(try keychain.grantAccess(to: Self.app, onItem: mail, origin: .answer, at: added + 1))
        #expect(try keychain.grantAccess(to: Self.confined, onItem: web, origin: .backup, at: added))
        #expect(
            try keychain.accessList(of: mail) == [
                AccessListEntry(program: Self.tool, added: added, origin: .command),
                AccessListEntry(program: Self.app, added: added + 1, origin: .answer),
            ])
        #expect(try keychain.itemsListing(Self.tool) == [mail])
        #expect(try keychain.itemsListing(Self.confined) == [web])
        #expect(try keychain.itemsListing(Self.rebuiltTool).isEmpty, "another digest is another program")

        #expect(try keychain.revokeAccess(of: Self.tool, onItem: mail))
        #expect(try keychain.revokeAccess(of: Self.tool, onItem: mail) == false)
        #expect(try keychain.accessList(of: mail).map(\.program) == [Self.app])
        #expect(try keychain.itemsListing(Self.tool).isEmpty)
    }

    @Test func aRebuiltExecutableReplacesItsOldEntryAndAPathAloneRevokesEveryDigest() throws {
        let (keychain, mail, _) = try keychainWithItems()
        try keychain.grantAccess(to: Self.tool, onItem: mail, origin: .answer)
        try keychain.grantAccess(to: Self.rebuiltTool, onItem: mail, origin: .answer)
        #expect(try keychain.accessList(of: mail).map(\.program) == [Self.rebuiltTool])
        #expect(try keychain.revokeAccess(of: .executable(path: "/usr/bin/tool", digest: Data()), onItem: mail))
        #expect(try keychain.accessList(of: mail).isEmpty)
    }

    @Test func aListGoesWithItsItemAndStaysAcrossUpdates() throws {
        let (keychain, mail, web) = try keychainWithItems()
        try keychain.grantAccess(to: Self.tool, onItem: mail, origin: .command)
        try keychain.grantAccess(to: Self.tool, onItem: web, origin: .command)
        try keychain.update(
            Fixture.query(service: "mail", returning: []), with: ItemChanges(data: Data("new".utf8)),
            caller: Fixture.app)
        #expect(try keychain.accessList(of: mail).map(\.program) == [Self.tool], "an update keeps the list")
        try keychain.delete(Fixture.query(service: "mail", returning: []), caller: Fixture.app)
        #expect(try keychain.itemsListing(Self.tool) == [web])
        #expect(try RawFile.integer(keychain.path!, "SELECT count(*) FROM item_access") == 1)
        let gone = #expect(throws: KeychainError.self) { try keychain.accessList(of: mail) }
        #expect(gone?.status == .itemNotFound)
        let refused = #expect(throws: KeychainError.self) {
            try keychain.grantAccess(to: Self.app, onItem: mail, origin: .command)
        }
        #expect(refused?.status == .itemNotFound)
    }

    @Test func aSynchronizableItemsTombstoneDropsItsList() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let item = NewItem(
            .genericPassword,
            attributes: [.service: .string("sync"), .account: .string("a"), .synchronizable: .number(1)],
            data: Data("x".utf8))
        let reference = try #require(
            try keychain.add(item, caller: Fixture.app, returning: .reference)?.persistentReference)
        try keychain.grantAccess(to: Self.app, onItem: reference, origin: .command)
        var query = Fixture.query(service: "sync", returning: [])
        query.synchronizable = .yes
        try keychain.delete(query, caller: Fixture.app)
        #expect(try RawFile.integer(keychain.path!, "SELECT count(*) FROM item_access") == 0)
        #expect(try keychain.itemsListing(Self.app).isEmpty)
    }

    @Test func aRowMovedToAnotherItemOrProgramDoesNotCount() throws {
        let (keychain, mail, web) = try keychainWithItems()
        try keychain.grantAccess(to: Self.tool, onItem: mail, origin: .command)
        let path = keychain.path!
        let webID = try #require(PersistentReference.parse(web)?.id)
        // The entry moved to the other item: it names the same program digest, so the lookup finds it — and
        // the seal (bound to the item's id) refuses it.
        try RawFile.execute(path, "UPDATE item_access SET item = ?", [.blob(webID)])
        #expect(try keychain.itemsListing(Self.tool).isEmpty)
        let moved = #expect(throws: KeychainError.self) { try keychain.accessList(of: web) }
        #expect(moved?.status == .decode)
        // Given another program's digest: refused too.
        try keychain.grantAccess(to: Self.app, onItem: mail, origin: .command)
        let appDigest = try #require(
            try RawFile.blob(
                path, "SELECT program FROM item_access WHERE item = ?", [.blob(PersistentReference.parse(mail)!.id)]))
        try RawFile.execute(
            path, "UPDATE item_access SET program = ? WHERE item = ?", [.blob(appDigest), .blob(webID)])
        #expect(try keychain.itemsListing(Self.app) == [mail])
    }

    @Test func listsNeedTheFirstUnlockAndHoldNoProgramInTheClear() throws {
        let (keychain, mail, _) = try keychainWithItems()
        try keychain.grantAccess(to: Self.tool, onItem: mail, origin: .command)
        try keychain.grantAccess(to: Self.app, onItem: mail, origin: .command)
        let path = keychain.path!
        _ = consume keychain
        let reopened = try KeychainDatabase.open(at: path)
        let locked = #expect(throws: KeychainError.self) { try reopened.accessList(of: mail) }
        #expect(locked?.status == .interactionNotAllowed)
        try reopened.unlock(with: Passphrase(Fixture.passphrase))
        #expect(try reopened.accessList(of: mail).count == 2)
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.file(file)))
            for name in ["/usr/bin/tool", "org.example.App"] {
                #expect(bytes.range(of: Data(name.utf8)) == nil, "\(name) is in \(file) in the clear")
            }
        }
    }

    @Test func aFormatV5FileGainsTheTables() throws {
        let path = directory.file("v5.keychain")
        do {
            let keychain = try KeychainDatabase.create(
                at: path, passphrase: Passphrase(Fixture.passphrase), keyDerivation: .minimum)
            try keychain.add(Fixture.password(service: "mail", account: "alice"), caller: Fixture.app)
        }
        try RawFile.execute(path, "DROP TABLE item_access")
        try RawFile.execute(path, "DROP TABLE access_log")
        try RawFile.execute(path, "PRAGMA user_version = 5")
        let keychain = try KeychainDatabase.open(at: path)
        #expect(try RawFile.integer(path, "PRAGMA user_version") == Int64(KeychainDatabase.formatVersion))
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        let found = try keychain.copyMatching(
            Fixture.query(service: "mail", returning: .reference), caller: Fixture.app)
        let reference = try #require(found.first?.persistentReference)
        try keychain.grantAccess(to: Self.tool, onItem: reference, origin: .command)
        #expect(try keychain.itemsListing(Self.tool) == [reference])
        try keychain.appendToAccessLog([
            AccessLogEntry(
                caller: AccessLogEntry.Caller(program: "p", identity: "i", pid: 1, uid: 2, frontEnd: "f"),
                operation: .read,
                item: AccessLogEntry.Item(reference: reference, itemClass: .genericPassword, names: nil),
                allowed: true, reason: "r")
        ])
        #expect(try keychain.accessLog().entries.map(\.sequence) == [1])
        #expect(try keychain.verifyIntegrity().isHealthy)
    }

    @Test func badProgramsAreRefused() throws {
        let (keychain, mail, _) = try keychainWithItems()
        for bad: TrustedProgram in [
            .executable(path: "relative/tool", digest: Data(count: 32)),
            .executable(path: "/x", digest: Data(count: 3)),
            .sandbox(appID: ""), .confined(label: "a\nb"),
        ] {
            let refused = #expect(throws: KeychainError.self) {
                try keychain.grantAccess(to: bad, onItem: mail, origin: .command)
            }
            #expect(refused?.status == .param)
        }
        let notAReference = #expect(throws: KeychainError.self) { try keychain.accessList(of: Data("nope".utf8)) }
        #expect(notAReference?.status == .param)
        #expect(try keychain.accessList(of: mail).isEmpty)
    }
}
