import Foundation
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

@testable import LatchkeyEngine

/// The pieces of a lookup that are computed once and reused (the statement text of a query's shape, the
/// caller's access-group digests) and the encodings on every lookup's path (persistent references,
/// attribute texts): reused values give exactly what computing them afresh gives, and are dropped when the
/// key they were made under goes.
@Suite(.dedicatedThreads) struct SearchPathTests {
    let directory = TemporaryDirectory()

    func selection(_ query: ItemQuery, on keychain: KeychainDatabase, caller: CallerIdentity = Fixture.app) throws
        -> ItemSelection
    {
        try keychain.selection(for: try RequestValidation.validate(query, caller: caller))
    }

    @Test func queriesOfOneShapeShareTheirTextAndBindTheirOwnValues() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let mail = try selection(Fixture.query(service: "mail", account: "alice"), on: keychain).statement(
            includeData: true)
        let chat = try selection(Fixture.query(service: "chat", account: "bob"), on: keychain).statement(
            includeData: true)
        #expect(mail.sql == chat.sql)
        #expect(
            mail.sql == "SELECT \(ItemTable.selectColumns), data FROM items WHERE class = ? AND tomb = 0 AND sync = 0"
                + " AND +agrp IN (?, ?) AND pk = ?")
        // Class, the caller's two groups, the primary-key digest: in the order of the text's placeholders.
        #expect(mail.arguments.count == 4 && chat.arguments.count == 4)
        #expect(mail.arguments[0] == .text("genp"))
        #expect(mail.arguments[1...2] == chat.arguments[1...2])
        #expect(mail.arguments[3] != chat.arguments[3])
    }

    @Test func everyShapeHasItsOwnText() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let attributesOnly = try selection(Fixture.query(service: "mail", account: "alice"), on: keychain).statement(
            includeData: false)
        #expect(
            attributesOnly.sql
                == "SELECT \(ItemTable.selectColumns) FROM items WHERE class = ? AND tomb = 0 AND sync = 0"
                + " AND +agrp IN (?, ?) AND pk = ?")
        let partial = try selection(
            ItemQuery(
                .genericPassword,
                matching: [.service: .string("mail"), .label: .string("Mail"), .accessible: .string("ak")],
                synchronizable: .any),
            on: keychain, caller: Fixture.everything
        ).statement(includeData: false)
        #expect(
            partial.sql == "SELECT \(ItemTable.selectColumns) FROM items WHERE class = ? AND tomb = 0 AND pdmn = ?"
                + " AND row_id IN (SELECT item FROM item_index WHERE digest = ?)"
                + " AND EXISTS (SELECT 1 FROM item_index WHERE digest = ? AND item = items.row_id)")
        #expect(partial.arguments.count == 4)
        #expect(partial.arguments[1] == .text("ak"))
    }

    @Test func rememberedGroupDigestsAreTheComputedOnes() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        let first = try selection(Fixture.query(service: "mail"), on: keychain)
        let remembered = keychain.vault.snapshot()
        let indexKey = try #require(remembered.indexKey)
        #expect(Set(remembered.groupDigests.keys) == ["com.example.app", "com.example.shared"])
        for group in ["com.example.app", "com.example.shared"] {
            #expect(remembered.groupDigests[group] == ItemDigests.group(group, key: indexKey))
        }
        let second = try selection(Fixture.query(service: "mail"), on: keychain)
        #expect(first.groupDigests == second.groupDigests)
        #expect(first.groupDigests?.count == 2)
    }

    @Test func anUnlockForgetsTheRememberedDigests() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        try keychain.add(Fixture.password(service: "mail", account: "alice"), caller: Fixture.app)
        _ = try keychain.copyMatching(Fixture.query(service: "mail", account: "alice"), caller: Fixture.app)
        #expect(keychain.vault.snapshot().groupDigests.count == 2)
        keychain.lock()
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        #expect(keychain.vault.snapshot().groupDigests.isEmpty)
        let found = try keychain.copyMatching(Fixture.query(service: "mail", account: "alice"), caller: Fixture.app)
        #expect(found.count == 1)
    }

    @Test func manyGroupsAreComputedWithoutBeingRemembered() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        let groups = (0..<600).map { "com.example.group\($0)" }
        let caller = CallerIdentity(applicationIdentifier: "com.example.many", accessGroups: groups)
        try keychain.add(
            Fixture.password(service: "mail", account: "alice", extra: [.accessGroup: .string(groups[599])]),
            caller: caller)
        let found = try keychain.copyMatching(Fixture.query(service: "mail", account: "alice"), caller: caller)
        #expect(found.count == 1)
        #expect(keychain.vault.snapshot().groupDigests.count == 512)
        let again = try keychain.copyMatching(Fixture.query(service: "mail", account: "alice"), caller: caller)
        #expect(again == found)
    }

    @Test(arguments: [["a", "b", "a"], (0..<12).map { "g\($0 % 9)" }])
    func aGroupNamedTwiceIsSearchedOnce(_ groups: [String]) throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let caller = CallerIdentity(applicationIdentifier: "com.example.groups", accessGroups: groups)
        let selection = try selection(Fixture.query(service: "mail", account: "alice"), on: keychain, caller: caller)
        let unique = Set(groups).count
        #expect(selection.groupDigests?.count == unique)
        #expect(Set(selection.groupDigests ?? []).count == unique)
        let placeholders = Array(repeating: "?", count: unique).joined(separator: ", ")
        #expect(selection.statement(includeData: false).sql.contains(" AND +agrp IN (\(placeholders)) AND pk = ?"))
    }

    @Test func aPersistentReferenceHasItsLayout() throws {
        let id = Data((1...16).map { UInt8($0) })
        let reference = PersistentReference.make(itemClass: .internetPassword, rowID: 0x0102_0304_0506_0708, id: id)
        #expect(reference == Data("lkp1inet".utf8) + Data([1, 2, 3, 4, 5, 6, 7, 8]) + id)
        let parsed = try #require(PersistentReference.parse(reference))
        #expect(parsed.itemClass == .internetPassword && parsed.rowID == 0x0102_0304_0506_0708 && parsed.id == id)
    }

    @Test func attributeTextsMustBeValidUTF8() throws {
        let attributes: [AttributeKey: AttributeValue] = [
            .service: .string("smörgåsbord ✓ 🔑"), .account: .string("alice"),
        ]
        #expect(AttributeBlob.decode(AttributeBlob.encode(attributes)) == attributes)
        var encoded = [UInt8](AttributeBlob.encode([.account: .string("abc")]))
        // Layout: format, count (4), key length (4), "acct", kind, value length (4), "abc".
        #expect(encoded.count == 1 + 4 + 4 + 4 + 1 + 4 + 3)
        let value = encoded.count - 3
        // Invalid byte, bad continuation, surrogate.
        for bad: [UInt8] in [[0xFF, 0x62, 0x63], [0xC3, 0x28, 0x63], [0xED, 0xA0, 0x80]] {
            encoded.replaceSubrange(value..., with: bad)
            #expect(AttributeBlob.decode(Data(encoded)) == nil)
        }
        var badKey = [UInt8](AttributeBlob.encode([.account: .string("abc")]))
        badKey[9] = 0xFE  // The key's first byte.
        #expect(AttributeBlob.decode(Data(badKey)) == nil)
    }
}
