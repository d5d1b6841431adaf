import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// The Secret Service's free-form attributes on generic passwords (`ss.<name>`): stored sealed, matched
/// through their keyed digests like every attribute, and found by `locate` — as locked or not — without
/// opening any item.
@Suite(.dedicatedThreads) struct SecretServiceAttributeTests {
    let directory = TemporaryDirectory()
    static let caller = CallerIdentity(
        applicationIdentifier: "org.freedesktop.secrets", accessGroups: ["org.freedesktop.secrets"])

    func item(_ account: String, _ attributes: [String: String], accessible: String = "ak") -> NewItem {
        var fields: [AttributeKey: AttributeValue] = [
            .service: .string("org.freedesktop.secrets"), .account: .string(account),
            .accessible: .string(accessible),
        ]
        for (name, value) in attributes { fields[AttributeKey.secretService(name)] = .string(value) }
        return NewItem(.genericPassword, attributes: fields, data: Data(account.utf8))
    }

    func query(_ attributes: [String: String]) -> ItemQuery {
        var matching: [AttributeKey: AttributeValue] = [.service: .string("org.freedesktop.secrets")]
        for (name, value) in attributes { matching[AttributeKey.secretService(name)] = .string(value) }
        return ItemQuery(.genericPassword, matching: matching, limit: .all, returning: [.attributes, .data])
    }

    @Test func freeFormAttributesAreStoredMatchedAndSealed() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(item("a", ["xdg:schema": "org.gnome.Mail", "user": "alice"]), caller: Self.caller)
        try keychain.add(item("b", ["xdg:schema": "org.gnome.Mail", "user": "bob"]), caller: Self.caller)
        try keychain.add(item("c", ["app": "chromium"]), caller: Self.caller)
        let alice = try keychain.copyMatching(query(["user": "alice"]), caller: Self.caller)
        #expect(alice.map(\.data) == [Data("a".utf8)])
        #expect(alice.first?[AttributeKey.secretService("xdg:schema")] == .string("org.gnome.Mail"))
        #expect(try keychain.copyMatching(query(["xdg:schema": "org.gnome.Mail"]), caller: Self.caller).count == 2)
        #expect(
            status { _ = try keychain.copyMatching(query(["user": "carol"]), caller: Self.caller) } == .itemNotFound)
        // Only passwords have them (an imported login keeps its custom fields), and a bare prefix is no attribute.
        try keychain.add(
            NewItem(.internetPassword, attributes: [AttributeKey.secretService("user"): .string("x")]),
            caller: Self.caller)
        #expect(throws: KeychainError(.noSuchAttribute, "attribute 'ss.user' does not exist in class cert")) {
            try keychain.add(
                NewItem(.certificate, attributes: [AttributeKey.secretService("user"): .string("x")]),
                caller: Self.caller)
        }
        #expect(throws: KeychainError(.noSuchAttribute, "attribute 'ss.' does not exist in class genp")) {
            try keychain.add(NewItem(.genericPassword, attributes: ["ss.": .string("x")]), caller: Self.caller)
        }
        // At most 256 of them on one item (each is an index entry).
        #expect(throws: KeychainError.param("an item may have at most 256 Secret Service attributes, not 257")) {
            try keychain.add(
                item("d", Dictionary(uniqueKeysWithValues: (0..<257).map { ("k\($0)", "v") })), caller: Self.caller)
        }
        // Sealed: neither name nor value is in any file of the keychain (the database, its journal).
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.count >= 2)
        for name in files {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.file(name)))
            #expect(
                bytes.range(of: Data("chromium".utf8)) == nil && bytes.range(of: Data("xdg:schema".utf8)) == nil,
                "\(name)")
        }
    }

    @Test func locateListsMatchesLockedOrNotWithoutOpeningThem() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let open = try #require(
            try keychain.add(
                item("a", ["user": "alice"], accessible: "ck"), caller: Self.caller, returning: .persistentReference))
        let closed = try #require(
            try keychain.add(item("b", ["user": "alice"]), caller: Self.caller, returning: .persistentReference))
        try keychain.add(item("c", ["user": "carol"]), caller: Self.caller)
        let query = ItemQuery(
            .genericPassword, matching: [AttributeKey.secretService("user"): .string("alice")], limit: .all)
        func located() throws -> [Data: Bool] {
            Dictionary(
                uniqueKeysWithValues: try keychain.locate(query, caller: Self.caller).map {
                    ($0.reference, $0.available)
                })
        }
        #expect(try located() == [open.persistentReference: true, closed.persistentReference: true])
        keychain.lock()
        // Locked, the when-unlocked item is listed as unavailable, never hidden; a read of it is refused.
        #expect(try located() == [open.persistentReference: true, closed.persistentReference: false])
        #expect(
            status {
                _ = try keychain.copyMatching(
                    ItemQuery(
                        .genericPassword, persistentReference: closed.persistentReference,
                        returning: .data, authenticationUI: .fail), caller: Self.caller)
            }
                == .interactionNotAllowed)
        // Another caller's items are not located; dates cannot be matched without opening.
        #expect(try keychain.locate(query, caller: Fixture.app).isEmpty)
        #expect(throws: KeychainError.param("only indexed attributes can be matched without opening items")) {
            _ = try keychain.locate(
                ItemQuery(.genericPassword, matching: [.creationDate: .date(Date())]), caller: Self.caller)
        }
    }
}
