import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// `addOrUpdate`: the atomic upsert behind `Keychain.set` — never delete-then-add.
@Suite(.dedicatedThreads) struct AddOrUpdateTests {
    let directory = TemporaryDirectory()

    @Test func addsThenUpdatesInPlace() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        #expect(
            try keychain.addOrUpdate(
                Fixture.password(
                    service: "s", account: "a", secret: "one",
                    extra: [.label: .string("first")]), caller: Fixture.app))
        let before = try #require(
            try keychain.copyMatching(
                Fixture.query(service: "s", returning: [.attributes, .persistentReference]),
                caller: Fixture.app
            ).first)
        #expect(
            try !keychain.addOrUpdate(
                Fixture.password(
                    service: "s", account: "a", secret: "two",
                    extra: [.label: .string("second")]), caller: Fixture.app))
        let after = try #require(
            try keychain.copyMatching(
                Fixture.query(service: "s", returning: [.attributes, .data, .persistentReference]), caller: Fixture.app
            ).first)
        #expect(after.data == Data("two".utf8))
        #expect(after[.label] == .string("second"))
        #expect(!before.persistentReference.isEmpty)
        #expect(after.persistentReference == before.persistentReference, "the same item, updated in place")
        #expect(after[.creationDate] == before[.creationDate])
        #expect(try keychain.rowCount() == 1)
    }

    @Test func aFailedUpsertKeepsTheOldValue() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.addOrUpdate(Fixture.password(service: "s", account: "a", secret: "keep me"), caller: Fixture.app)
        // A new value over the size limit: refused before anything is touched.
        #expect(
            status {
                try keychain.addOrUpdate(
                    NewItem(
                        .genericPassword,
                        attributes: [
                            .service: .string("s"), .account: .string("a"),
                        ], data: Data(count: ItemLimits.maximumDataBytes + 1)),
                    caller: Fixture.app)
            } == .param)
        // Locked: the old value stays readable afterwards.
        keychain.lock()
        #expect(
            status {
                try keychain.addOrUpdate(
                    Fixture.password(service: "s", account: "a", secret: "new"),
                    caller: Fixture.app)
            } == .interactionNotAllowed)
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        #expect(
            try keychain.copyMatching(Fixture.query(service: "s"), caller: Fixture.app).first?.data
                == Data("keep me".utf8))
    }

    @Test func accessibilityChangesOnlyWhenGiven() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.addOrUpdate(
            Fixture.password(service: "s", account: "a", extra: [.accessible: .string("ck")]),
            caller: Fixture.app)
        try keychain.addOrUpdate(Fixture.password(service: "s", account: "a", secret: "x"), caller: Fixture.app)
        #expect(
            try keychain.copyMatching(Fixture.query(service: "s", returning: .attributes), caller: Fixture.app)
                .first?[.accessible] == .string("ck"))
        try keychain.addOrUpdate(
            Fixture.password(service: "s", account: "a", extra: [.accessible: .string("dk")]),
            caller: Fixture.app)
        #expect(
            try keychain.copyMatching(Fixture.query(service: "s", returning: .attributes), caller: Fixture.app)
                .first?[.accessible] == .string("dk"))
    }

    @Test func concurrentUpsertsOfOneKeyLeaveOneItem() async throws {
        let keychain = KeychainDatabase.inMemory()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for round in 0..<20 {
                        try keychain.addOrUpdate(
                            Fixture.password(service: "race", account: "one", secret: "\(worker)-\(round)"),
                            caller: Fixture.app)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try keychain.copyMatching(Fixture.query(service: "race", limit: .all), caller: Fixture.app).count == 1)
    }
}
