import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// `addAll`: many items in one transaction, inserted in digest order — all or nothing, and indexed exactly
/// as single adds are.
@Suite(.dedicatedThreads) struct AddAllTests {
    let directory = TemporaryDirectory()

    @Test func aBatchIsAllOrNothing() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.addAll((0..<100).map { Fixture.password(service: "batch", account: "\($0)") }, caller: Fixture.app)
        #expect(try keychain.rowCount() == 100)
        // The last item duplicates the first: nothing of the second batch is stored.
        let second =
            (100..<150).map { Fixture.password(service: "batch", account: "\($0)") }
            + [Fixture.password(service: "batch", account: "0")]
        #expect(status { try keychain.addAll(second, caller: Fixture.app) } == .duplicateItem)
        #expect(try keychain.rowCount() == 100)
        #expect(
            status {
                try keychain.addAll(
                    [Fixture.password(service: "b", account: "x", extra: [.server: .string("h")])],
                    caller: Fixture.app)
            } == .noSuchAttribute)
    }

    @Test func aBatchIsFoundLikeSingleAdds() throws {
        let batched = try Fixture.newKeychain(in: directory, name: "batched.keychain")
        let single = try Fixture.newKeychain(in: directory, name: "single.keychain")
        let items = (0..<600).map {
            Fixture.password(
                service: "svc\($0 % 5)", account: "acct\($0)", secret: "secret \($0)",
                extra: [.label: .string("label\($0 % 7)"), .comment: .string("c\($0 % 3)")])
        }
        try batched.addAll(items, caller: Fixture.app)
        for item in items { try single.add(item, caller: Fixture.app) }
        for number in stride(from: 0, to: 600, by: 37) {
            let query = Fixture.query(service: "svc\(number % 5)", account: "acct\(number)")
            #expect(try batched.copyMatching(query, caller: Fixture.app).first?.data == Data("secret \(number)".utf8))
        }
        func accounts(_ keychain: KeychainDatabase, _ matching: [AttributeKey: AttributeValue]) throws -> [String] {
            try keychain.copyMatching(
                ItemQuery(.genericPassword, matching: matching, limit: .all, returning: .attributes),
                caller: Fixture.app
            )
            .compactMap { if case .string(let account)? = $0[.account] { account } else { nil } }.sorted()
        }
        for matching: [AttributeKey: AttributeValue] in [
            [.label: .string("label3")], [.comment: .string("c1"), .service: .string("svc2")],
            [.service: .string("svc4")],
        ] {
            let found = try accounts(batched, matching)
            #expect(!found.isEmpty)
            #expect(found == (try accounts(single, matching)))
        }
        let report = try batched.verifyIntegrity()
        #expect(report.isHealthy && report.verified == 600)
    }

    @Test func aBatchReplacesATombstone() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let synchronizable: [AttributeKey: AttributeValue] = [.synchronizable: .bool(true), .label: .string("old")]
        try keychain.add(
            Fixture.password(service: "mail", account: "a", secret: "v1", extra: synchronizable),
            caller: Fixture.app)
        let query = ItemQuery(.genericPassword, matching: [.service: .string("mail")], synchronizable: .yes)
        #expect(try keychain.delete(query, caller: Fixture.app) == 1)
        try keychain.addAll(
            [
                Fixture.password(service: "mail", account: "b", secret: "other", extra: [.synchronizable: .bool(true)]),
                Fixture.password(
                    service: "mail", account: "a", secret: "v2",
                    extra: [.synchronizable: .bool(true), .label: .string("new")]),
            ], caller: Fixture.app)
        #expect(try keychain.rowCount() == 2, "the tombstone was replaced, not kept beside the new item")
        let byLabel = ItemQuery(
            .genericPassword, matching: [.label: .string("new")], synchronizable: .yes, returning: .data)
        #expect(try keychain.copyMatching(byLabel, caller: Fixture.app).map(\.data) == [Data("v2".utf8)])
        let oldLabel = ItemQuery(.genericPassword, matching: [.label: .string("old")], synchronizable: .yes)
        #expect(status { _ = try keychain.copyMatching(oldLabel, caller: Fixture.app) } == .itemNotFound)
    }

    @Test func twoItemsWithOnePrimaryKeyInABatchStoreNothing() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let batch =
            (0..<50).map { Fixture.password(service: "dup", account: "\($0)") }
            + [Fixture.password(service: "dup", account: "7", secret: "again")]
        #expect(status { try keychain.addAll(batch, caller: Fixture.app) } == .duplicateItem)
        #expect(try keychain.rowCount() == 0)
    }

    @Test func aBatchOnALockedKeychainStoresNothing() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        keychain.lock()
        // Default accessibility (`ak`) needs the unlocked class key; `ck` items are served after the first unlock.
        let batch =
            (0..<100).map { Fixture.password(service: "locked", account: "\($0)", extra: [.accessible: .string("ck")]) }
            + [Fixture.password(service: "locked", account: "ak")]
        #expect(status { try keychain.addAll(batch, caller: Fixture.app) } == .interactionNotAllowed)
        #expect(try keychain.rowCount() == 0)
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        try keychain.addAll(batch, caller: Fixture.app)
        #expect(try keychain.rowCount() == 101)
    }
}
