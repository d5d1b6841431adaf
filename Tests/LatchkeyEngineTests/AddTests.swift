import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@Suite(.dedicatedThreads) struct AddTests {
    let directory = TemporaryDirectory()

    @Test func defaultsGroupAccessibilitySyncAndDates() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let before = Date()
        let added = try #require(
            try keychain.add(
                Fixture.password(service: "mail", account: "alice"),
                caller: Fixture.app, returning: .attributes))
        #expect(added[.accessGroup] == .string("com.example.app"))
        #expect(added[.accessible] == .string("ak"))
        #expect(added[.synchronizable] == .number(0))
        let created = try #require(added[.creationDate]?.dateValue)
        #expect(created >= before && created <= Date())
        #expect(added[.modificationDate] == added[.creationDate])
        #expect(added.data == nil)
    }

    @Test func certificatesDefaultToAlways() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let added = try keychain.add(
            NewItem(.certificate, attributes: [.serialNumber: .data(Data([1]))]),
            caller: Fixture.app, returning: .attributes)
        #expect(added?[.accessible] == .string("dk"))
    }

    @Test func callerDatesAreReplacedByNow() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let old = Date(timeIntervalSince1970: 0)
        let added = try keychain.add(
            Fixture.password(service: "s", account: "a", extra: [.creationDate: .date(old)]),
            caller: Fixture.app, returning: .attributes)
        #expect(added?[.creationDate] != .date(old))
    }

    @Test func returningShapesThroughTheDictionaryLayer() throws {
        let backend = DatabaseBackend(database: try Fixture.newKeychain(in: directory), caller: Fixture.app)
        #expect(try backend.add(["class": "genp", "svce": "a", "v_Data": Data("1".utf8)]) == nil)
        #expect(
            try backend.add(["class": "genp", "svce": "b", "v_Data": Data("2".utf8), "r_Data": true]) as? Data
                == Data("2".utf8))
        let reference = try backend.add([
            "class": "genp", "svce": "c", "v_Data": Data("3".utf8), "r_PersistentRef": true,
        ])
        #expect((reference as? Data)?.count == 32)
        let dictionary = try #require(
            try backend.add([
                "class": "genp", "svce": "d", "acct": "x", "v_Data": Data("4".utf8), "r_Attributes": true,
                "r_Data": true,
            ]) as? [String: Any])
        #expect(dictionary["svce"] as? String == "d")
        #expect(dictionary["acct"] as? String == "x")
        #expect(dictionary["agrp"] as? String == "com.example.app")
        #expect(dictionary["pdmn"] as? String == "ak")
        #expect(dictionary["sync"] as? Int == 0)
        #expect(dictionary["cdat"] is Date)
        #expect(dictionary["v_Data"] as? Data == Data("4".utf8))
        #expect(dictionary["class"] == nil)
    }

    @Test func itemsWithoutDataAreAllowed() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(NewItem(.genericPassword, attributes: [.service: .string("flag")]), caller: Fixture.app)
        let found = try keychain.copyMatching(
            ItemQuery(
                .genericPassword, matching: [.service: .string("flag")],
                returning: .data), caller: Fixture.app)
        #expect(found.first?.data == Data())
    }

    @Test func aDuplicateLeavesTheStoredItemAlone() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(Fixture.password(service: "mail", account: "alice", secret: "first"), caller: Fixture.app)
        #expect(
            status {
                try keychain.add(
                    Fixture.password(service: "mail", account: "alice", secret: "second"),
                    caller: Fixture.app)
            } == .duplicateItem)
        #expect(
            try keychain.copyMatching(Fixture.query(service: "mail"), caller: Fixture.app).first?.data
                == Data("first".utf8))
    }

    @Test func stringsCompareByTheirExactBytes() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        // "é" precomposed and decomposed are equal Swift strings but different keychain accounts (as on Apple).
        try keychain.add(Fixture.password(service: "s", account: "caf\u{E9}"), caller: Fixture.app)
        try keychain.add(Fixture.password(service: "s", account: "cafe\u{301}"), caller: Fixture.app)
        #expect(try keychain.copyMatching(Fixture.query(service: "s", limit: .all), caller: Fixture.app).count == 2)
    }
}
