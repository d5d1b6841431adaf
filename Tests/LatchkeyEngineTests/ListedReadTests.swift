import Foundation
import Latchkey
import LatchkeyEngine
import LatchkeyTestSupport
import Testing

/// Reads through access lists (`copyMatching(_:listedFor:presence:)`): a program finds the items whose lists
/// name it and that the query matches — never another item of the same group, never after it is taken off —
/// and `accessLists` shows every list with the item's names, never its secret.
@Suite struct ListedReadTests {
    let directory = TemporaryDirectory()
    static let tool = TrustedProgram.executable(path: "/usr/bin/tool", digest: Data(repeating: 7, count: 32))
    static let app = TrustedProgram.sandbox(appID: "org.example.App")

    func keychain() throws -> (KeychainDatabase, mail: Data, web: Data) {
        let keychain = try Fixture.newKeychain(in: directory)
        let mail = try #require(
            try keychain.add(
                Fixture.password(service: "mail", account: "alice", extra: [.label: .string("Mail")]),
                caller: Fixture.app, returning: .reference)?.persistentReference)
        let web = try #require(
            try keychain.add(
                Fixture.password(service: "web", account: "alice"), caller: Fixture.app, returning: .reference)?
                .persistentReference)
        return (keychain, mail, web)
    }

    @Test func aListedProgramReadsOnlyTheListedItemsTheQueryMatches() throws {
        let (keychain, mail, web) = try keychain()
        try keychain.grantAccess(to: Self.tool, onItem: mail, origin: .command)
        let found = try keychain.copyMatching(
            Fixture.query(service: "mail", returning: [.data, .attributes]), listedFor: Self.tool, presence: nil)
        #expect(found.map(\.data) == [Data("s3cret".utf8)])
        #expect(found.first?[.account] == .string("alice"))

        let other = #expect(throws: KeychainError.self) {
            try keychain.copyMatching(Fixture.query(service: "web"), listedFor: Self.tool, presence: nil)
        }
        #expect(other?.status == .itemNotFound, "the same group's other item is not listed")
        var byAccount = ItemQuery(.genericPassword, matching: [.account: .string("alice")], limit: .all)
        byAccount.returning = .reference
        #expect(
            try keychain.copyMatching(byAccount, listedFor: Self.tool, presence: nil).map(\.persistentReference)
                == [mail])
        let unlisted = #expect(throws: KeychainError.self) {
            try keychain.copyMatching(Fixture.query(service: "mail"), listedFor: Self.app, presence: nil)
        }
        #expect(unlisted?.status == .itemNotFound)

        try keychain.grantAccess(to: Self.tool, onItem: web, origin: .answer)
        #expect(try keychain.copyMatching(byAccount, listedFor: Self.tool, presence: nil).count == 2)
        byAccount.limit = .one
        #expect(try keychain.copyMatching(byAccount, listedFor: Self.tool, presence: nil).count == 1)

        try keychain.revokeAccess(of: Self.tool, onItem: mail)
        let revoked = #expect(throws: KeychainError.self) {
            try keychain.copyMatching(Fixture.query(service: "mail"), listedFor: Self.tool, presence: nil)
        }
        #expect(revoked?.status == .itemNotFound, "revocation takes effect at once")
    }

    @Test func listsAreShownWithTheItemsNamesAndNeverTheSecret() throws {
        let (keychain, mail, web) = try keychain()
        #expect(try keychain.accessLists().isEmpty)
        let added = Date(timeIntervalSince1970: 1_700_000_000)
        try keychain.grantAccess(to: Self.app, onItem: web, origin: .command, at: added)
        try keychain.grantAccess(to: Self.tool, onItem: mail, origin: .answer, at: added)
        #expect(
            try keychain.accessLists() == [
                ItemAccessList(
                    reference: mail, itemClass: .genericPassword, summary: "label=Mail service=mail account=alice",
                    entries: [AccessListEntry(program: Self.tool, added: added, origin: .answer)]),
                ItemAccessList(
                    reference: web, itemClass: .genericPassword, summary: "service=web account=alice",
                    entries: [AccessListEntry(program: Self.app, added: added, origin: .command)]),
            ])
        try keychain.revokeAccess(of: Self.app, onItem: web)
        #expect(
            try keychain.accessLists(of: web) == [
                ItemAccessList(
                    reference: web, itemClass: .genericPassword, summary: "service=web account=alice", entries: [])
            ])
        #expect(try keychain.accessLists().map(\.reference) == [mail])
    }
}
