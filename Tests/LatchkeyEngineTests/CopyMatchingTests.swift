import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@Suite(.dedicatedThreads) struct CopyMatchingTests {
    let directory = TemporaryDirectory()

    func filled() throws -> (KeychainDatabase, DatabaseBackend) {
        let keychain = try Fixture.newKeychain(in: directory)
        for account in ["alice", "bob", "carol"] {
            try keychain.add(
                Fixture.password(
                    service: "mail", account: account, secret: "pw-\(account)",
                    extra: [.label: .string("Mail \(account)")]), caller: Fixture.app)
        }
        try keychain.add(Fixture.password(service: "chat", account: "alice", secret: "pw-chat"), caller: Fixture.app)
        return (keychain, DatabaseBackend(database: keychain, caller: Fixture.app))
    }

    @Test func theDefaultLimitIsOne() throws {
        let (keychain, _) = try filled()
        #expect(try keychain.copyMatching(Fixture.query(service: "mail"), caller: Fixture.app).count == 1)
    }

    @Test func limitAllAndANumber() throws {
        let (keychain, _) = try filled()
        #expect(try keychain.copyMatching(Fixture.query(service: "mail", limit: .all), caller: Fixture.app).count == 3)
        #expect(
            try keychain.copyMatching(Fixture.query(service: "mail", limit: .count(2)), caller: Fixture.app).count == 2)
        #expect(try keychain.copyMatching(ItemQuery(.genericPassword, limit: .all), caller: Fixture.app).count == 4)
    }

    @Test func matchingOnANonKeyAttribute() throws {
        let (keychain, _) = try filled()
        let found = try keychain.copyMatching(
            ItemQuery(.genericPassword, matching: [.label: .string("Mail bob")], returning: .data), caller: Fixture.app)
        #expect(found.map(\.data) == [Data("pw-bob".utf8)])
    }

    @Test func noMatchIsItemNotFound() throws {
        let (keychain, backend) = try filled()
        #expect(
            status {
                _ = try keychain.copyMatching(Fixture.query(service: "mail", account: "dave"), caller: Fixture.app)
            }
                == .itemNotFound)
        #expect(status { _ = try backend.copyMatching(["class": "inet"]) } == .itemNotFound)
    }

    @Test func resultShapes() throws {
        let (_, backend) = try filled()
        let base: [String: Any] = ["class": "genp", "svce": "mail", "acct": "bob"]
        // No return key: success and nothing returned.
        #expect(try backend.copyMatching(base) == nil)
        // Data only: the data.
        #expect(try backend.copyMatching(base.merging(["r_Data": true]) { a, _ in a }) as? Data == Data("pw-bob".utf8))
        // Persistent reference only: the reference, which finds the item again.
        let reference = try #require(
            try backend.copyMatching(base.merging(["r_PersistentRef": true]) { a, _ in a }) as? Data)
        #expect(
            try backend.copyMatching(["v_PersistentRef": reference, "r_Data": true]) as? Data == Data("pw-bob".utf8))
        // Attributes: a dictionary without the data.
        let attributes = try #require(
            try backend.copyMatching(base.merging(["r_Attributes": true]) { a, _ in a })
                as? [String: Any])
        #expect(attributes["labl"] as? String == "Mail bob")
        #expect(attributes["v_Data"] == nil)
        // Attributes and data: the dictionary with v_Data.
        let both = try #require(
            try backend.copyMatching(base.merging(["r_Attributes": true, "r_Data": true]) { a, _ in a })
                as? [String: Any])
        #expect(both["v_Data"] as? Data == Data("pw-bob".utf8))
        // Data and persistent reference: a dictionary of the two.
        let pair = try #require(
            try backend.copyMatching(base.merging(["r_Data": true, "r_PersistentRef": true]) { a, _ in a })
                as? [String: Any])
        #expect(Set(pair.keys) == ["v_Data", "v_PersistentRef"])
        // Ref for a password: class, attributes-less dictionary with the data (as Apple's server returns).
        let ref = try #require(try backend.copyMatching(base.merging(["r_Ref": true]) { a, _ in a }) as? [String: Any])
        #expect(ref["class"] as? String == "genp")
        #expect(ref["v_Data"] as? Data == Data("pw-bob".utf8))
        // A limit above one gives an array, even for a single match.
        let array = try #require(
            try backend.copyMatching(
                base.merging(["r_Data": true, "m_Limit": "m_LimitAll"]) { a, _ in a }) as? [Data])
        #expect(array == [Data("pw-bob".utf8)])
        let counted = try #require(
            try backend.copyMatching(
                ["class": "genp", "svce": "mail", "r_Attributes": true, "m_Limit": 2]) as? [[String: Any]])
        #expect(counted.count == 2)
    }

    @Test func aForeignOrMalformedPersistentReference() throws {
        let (keychain, backend) = try filled()
        #expect(
            status { _ = try backend.copyMatching(["class": "genp", "v_PersistentRef": Data("junk".utf8)]) } == .param)
        let reference = try #require(
            try keychain.copyMatching(
                Fixture.query(service: "mail", account: "bob", returning: .persistentReference), caller: Fixture.app
            )
            .first?.persistentReference)
        #expect(status { _ = try backend.copyMatching(["class": "inet", "v_PersistentRef": reference]) } == .param)
        // Another caller cannot reach the item through its reference.
        #expect(
            status {
                _ = try DatabaseBackend(database: keychain, caller: Fixture.other)
                    .copyMatching(["v_PersistentRef": reference])
            } == .itemNotFound)
    }

    @Test func matchingOnDates() throws {
        let (keychain, _) = try filled()
        let item = try #require(
            try keychain.copyMatching(
                Fixture.query(service: "chat", returning: .attributes), caller: Fixture.app
            ).first)
        let created = try #require(item[.creationDate])
        let found = try keychain.copyMatching(
            ItemQuery(.genericPassword, matching: [.creationDate: created], limit: .all, returning: .attributes),
            caller: Fixture.app)
        #expect(found.contains { $0[.service] == .string("chat") })
        #expect(
            status {
                _ = try keychain.copyMatching(
                    ItemQuery(.genericPassword, matching: [.creationDate: .date(Date(timeIntervalSince1970: 1))]),
                    caller: Fixture.app)
            } == .itemNotFound)
    }
}
