import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@Suite(.dedicatedThreads) struct UpdateTests {
    let directory = TemporaryDirectory()

    func filled() throws -> KeychainDatabase {
        let keychain = try Fixture.newKeychain(in: directory)
        for account in ["alice", "bob"] {
            try keychain.add(
                Fixture.password(service: "mail", account: account, secret: "old-\(account)"), caller: Fixture.app)
        }
        try keychain.add(Fixture.password(service: "chat", account: "alice"), caller: Fixture.app)
        return keychain
    }

    @Test func updatesEveryMatchAndRefreshesTheModificationDate() throws {
        let keychain = try filled()
        let before = try keychain.copyMatching(
            Fixture.query(service: "mail", limit: .all, returning: .attributes),
            caller: Fixture.app)
        Thread.sleep(forTimeInterval: 0.01)
        let count = try keychain.update(
            ItemQuery(.genericPassword, matching: [.service: .string("mail")]),
            with: ItemChanges(attributes: [.comment: .string("rotated")]), caller: Fixture.app)
        #expect(count == 2)
        let after = try keychain.copyMatching(
            ItemQuery(
                .genericPassword, matching: [.service: .string("mail")], limit: .all, returning: [.attributes, .data]),
            caller: Fixture.app)
        #expect(after.count == 2)
        for item in after {
            #expect(item[.comment] == .string("rotated"))
            let old = try #require(before.first { $0[.account] == item[.account] })
            #expect(item[.creationDate] == old[.creationDate])
            #expect(
                try #require(item[.modificationDate]?.dateValue) > (try #require(old[.modificationDate]?.dateValue)))
            #expect(item.data == Data("old-\(item[.account]!.stringValue!)".utf8), "the secret is untouched")
        }
        #expect(
            try keychain.copyMatching(Fixture.query(service: "chat", returning: .attributes), caller: Fixture.app)
                .first?[.comment] == nil)
    }

    @Test func newDataReplacesTheSecret() throws {
        let keychain = try filled()
        try keychain.update(
            Fixture.query(service: "mail", account: "bob", returning: []),
            with: ItemChanges(data: Data("new".utf8)), caller: Fixture.app)
        #expect(
            try keychain.copyMatching(Fixture.query(service: "mail", account: "bob"), caller: Fixture.app).first?.data
                == Data("new".utf8))
        #expect(
            try keychain.copyMatching(Fixture.query(service: "mail", account: "alice"), caller: Fixture.app).first?.data
                == Data("old-alice".utf8))
    }

    @Test func movingOntoAnExistingPrimaryKeyIsADuplicateAndChangesNothing() throws {
        let keychain = try filled()
        #expect(
            status {
                try keychain.update(
                    Fixture.query(service: "mail", account: "bob", returning: []),
                    with: ItemChanges(attributes: [.account: .string("alice")]), caller: Fixture.app)
            } == .duplicateItem)
        // Two matches renamed to one key collide with each other: the whole update rolls back.
        #expect(
            status {
                try keychain.update(
                    ItemQuery(.genericPassword, matching: [.service: .string("mail")]),
                    with: ItemChanges(attributes: [.account: .string("zed")]), caller: Fixture.app)
            } == .duplicateItem)
        let accounts = try keychain.copyMatching(
            Fixture.query(service: "mail", limit: .all, returning: .attributes),
            caller: Fixture.app
        ).compactMap { $0[.account]?.stringValue }
        #expect(Set(accounts) == ["alice", "bob"])
    }

    @Test func changingThePrimaryKeyMovesTheItem() throws {
        let keychain = try filled()
        try keychain.update(
            Fixture.query(service: "mail", account: "bob", returning: []),
            with: ItemChanges(attributes: [.account: .string("robert")]), caller: Fixture.app)
        #expect(
            status {
                _ = try keychain.copyMatching(Fixture.query(service: "mail", account: "bob"), caller: Fixture.app)
            }
                == .itemNotFound)
        #expect(
            try keychain.copyMatching(Fixture.query(service: "mail", account: "robert"), caller: Fixture.app).first?
                .data
                == Data("old-bob".utf8))
    }

    @Test func accessibilityCanChange() throws {
        let keychain = try filled()
        try keychain.update(
            Fixture.query(service: "chat", returning: []),
            with: ItemChanges(attributes: [.accessible: .string("ck")]), caller: Fixture.app)
        keychain.lock()
        #expect(
            try keychain.copyMatching(Fixture.query(service: "chat"), caller: Fixture.app).first?.data
                == Data("s3cret".utf8))
    }

    @Test func nothingMatchingIsItemNotFound() throws {
        let keychain = try filled()
        #expect(
            status {
                try keychain.update(
                    Fixture.query(service: "none", returning: []),
                    with: ItemChanges(data: Data()), caller: Fixture.app)
            } == .itemNotFound)
    }

    @Test func queryAndChangeKeysApplesRules() throws {
        let backend = DatabaseBackend(database: try filled(), caller: Fixture.app)
        let query: [String: Any] = ["class": "genp", "svce": "mail"]
        #expect(
            status { try backend.update(query.merging(["m_Limit": "m_LimitAll"]) { a, _ in a }, with: ["icmt": "x"]) }
                == .param)
        #expect(
            status { try backend.update(query.merging(["r_Data": true]) { a, _ in a }, with: ["icmt": "x"]) } == .param)
        #expect(status { try backend.update(query, with: ["class": "inet"]) } == .noSuchAttribute)
        #expect(status { try backend.update(query, with: ["r_Data": true]) } == .noSuchAttribute)
        #expect(status { try backend.update(query, with: ["cdat": Date()]) } == .param)
        #expect(status { try backend.update(query, with: ["srvr": "x"]) } == .noSuchAttribute)
        #expect(status { try backend.update(query, with: ["v_Data": "text"]) } == .param)
        try backend.update(query, with: ["v_Data": Data("via dictionary".utf8)])
    }

    @Test func theTypedAPIRefusesANumericLimitOrReturnKeys() throws {
        let keychain = try filled()
        #expect(
            status {
                try keychain.update(
                    Fixture.query(service: "mail", limit: .count(2), returning: []),
                    with: ItemChanges(), caller: Fixture.app)
            } == .param)
        #expect(
            status {
                try keychain.update(
                    Fixture.query(service: "mail", returning: .data),
                    with: ItemChanges(), caller: Fixture.app)
            } == .param)
    }
}
