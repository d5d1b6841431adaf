import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@Suite(.dedicatedThreads) struct DeleteTests {
    let directory = TemporaryDirectory()

    @Test func deletesEveryMatch() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        for account in ["a", "b", "c"] {
            try keychain.add(Fixture.password(service: "mail", account: account), caller: Fixture.app)
        }
        try keychain.add(Fixture.password(service: "chat", account: "a"), caller: Fixture.app)
        #expect(try keychain.delete(Fixture.query(service: "mail", returning: []), caller: Fixture.app) == 3)
        #expect(try keychain.rowCount() == 1)
        #expect(
            status { try keychain.delete(Fixture.query(service: "mail", returning: []), caller: Fixture.app) }
                == .itemNotFound)
    }

    /// `_SecItemDelete` refuses a limit other than unlimited; it never looks at the return type.
    @Test func aMatchLimitIsParamAReturnKeyIsIgnored() throws {
        let backend = DatabaseBackend(database: try Fixture.newKeychain(in: directory), caller: Fixture.app)
        #expect(status { try backend.delete(["class": "genp", "m_Limit": 1]) } == .param)
        #expect(status { try backend.delete(["class": "genp", "r_Attributes": true]) } == .itemNotFound)
        #expect(status { try backend.delete(["class": "genp"]) } == .itemNotFound)
    }

    /// Certificate filters select in searches only: a typed update or delete that carried one is refused,
    /// never run as if the filter were not there (which would change or remove every certificate).
    @Test func certificateFiltersAreParamForUpdateAndDelete() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        for serial in [1, 2] as [UInt8] {
            try keychain.add(
                NewItem(.certificate, attributes: [.serialNumber: .data(Data([serial])), .label: .string("c")]),
                caller: Fixture.app)
        }
        var match = CertificateMatch()
        match.subjectContains = "nobody"
        let filtered = ItemQuery(.certificate, matching: [.label: .string("c")], limit: .all, certificateMatch: match)
        #expect(status { try keychain.delete(filtered, caller: Fixture.app) } == .param)
        #expect(
            status {
                try keychain.update(
                    filtered, with: ItemChanges(attributes: [.label: .string("d")]), caller: Fixture.app)
            }
                == .param)
        #expect(
            try keychain.copyMatching(
                ItemQuery(.certificate, matching: [.label: .string("c")], limit: .all), caller: Fixture.app
            ).count
                == 2)
        #expect(
            try keychain.delete(
                ItemQuery(.certificate, matching: [.label: .string("c")], limit: .all), caller: Fixture.app) == 2)
    }

    @Test func synchronizableItemsLeaveATombstoneThatAnAddReplaces() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let item = Fixture.password(service: "mail", account: "a", secret: "v1", extra: [.synchronizable: .bool(true)])
        try keychain.add(item, caller: Fixture.app)
        let query = ItemQuery(.genericPassword, matching: [.service: .string("mail")], synchronizable: .yes)
        #expect(try keychain.delete(query, caller: Fixture.app) == 1)
        #expect(try keychain.rowCount() == 1, "the tombstone stays")
        #expect(status { _ = try keychain.copyMatching(query, caller: Fixture.app) } == .itemNotFound)
        #expect(try keychain.verifyIntegrity().tombstones == 1)
        // Adding the same primary key again replaces the tombstone.
        try keychain.add(
            Fixture.password(
                service: "mail", account: "a", secret: "v2",
                extra: [.synchronizable: .bool(true)]), caller: Fixture.app)
        #expect(try keychain.rowCount() == 1)
        var read = query
        read.returning = .data
        #expect(try keychain.copyMatching(read, caller: Fixture.app).first?.data == Data("v2".utf8))
    }

    @Test func updatingOntoATombstoneKeepsTheTombstone() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let sync: [AttributeKey: AttributeValue] = [.synchronizable: .bool(true)]
        try keychain.add(Fixture.password(service: "s", account: "gone", extra: sync), caller: Fixture.app)
        try keychain.add(Fixture.password(service: "s", account: "kept", extra: sync), caller: Fixture.app)
        try keychain.delete(
            ItemQuery(.genericPassword, matching: [.account: .string("gone")], synchronizable: .yes),
            caller: Fixture.app)
        let kept = try #require(
            try keychain.copyMatching(
                ItemQuery(
                    .genericPassword, matching: [.account: .string("kept")], synchronizable: .yes,
                    returning: .persistentReference),
                caller: Fixture.app
            ).first?.persistentReference)
        try keychain.update(
            ItemQuery(.genericPassword, matching: [.account: .string("kept")], synchronizable: .yes),
            with: ItemChanges(attributes: [.account: .string("gone")]), caller: Fixture.app)
        // The live item now holds the primary key, with its own identity and secret; the old name is free;
        // the tombstone stays, so the deletion of "gone" can still sync.
        let now = try keychain.copyMatching(
            ItemQuery(
                .genericPassword, matching: [.account: .string("gone")], synchronizable: .yes, limit: .all,
                returning: [.data, .persistentReference]), caller: Fixture.app)
        #expect(now.map(\.persistentReference) == [kept])
        #expect(now.first?.data == Data("s3cret".utf8))
        #expect(
            status {
                _ = try keychain.copyMatching(
                    ItemQuery(
                        .genericPassword, matching: [.account: .string("kept")],
                        synchronizable: .yes), caller: Fixture.app)
            } == .itemNotFound)
        #expect(try keychain.rowCount() == 2)
        let report = try keychain.verifyIntegrity()
        #expect(report.tombstones == 1 && report.verified == 1 && report.isHealthy, "\(report)")
        #expect(try keychain.changes(after: 0).map(\.kind) == [.added, .added, .tombstoned, .updated])
    }

    @Test func nonSynchronizableItemsCanBeDeletedWhileLockedSynchronizableOnesCannot() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(Fixture.password(service: "plain", account: "a"), caller: Fixture.app)
        try keychain.add(
            Fixture.password(service: "synced", account: "a", extra: [.synchronizable: .bool(true)]),
            caller: Fixture.app)
        keychain.lock()
        #expect(try keychain.delete(Fixture.query(service: "plain", returning: []), caller: Fixture.app) == 1)
        #expect(
            status {
                try keychain.delete(
                    ItemQuery(
                        .genericPassword, matching: [.service: .string("synced")],
                        synchronizable: .yes), caller: Fixture.app)
            } == .interactionNotAllowed)
        // A date filter cannot be decided by the index: locked items then need their key.
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        try keychain.add(Fixture.password(service: "dated", account: "a"), caller: Fixture.app)
        let created = try #require(
            try keychain.copyMatching(
                Fixture.query(service: "dated", returning: .attributes),
                caller: Fixture.app
            ).first?[.creationDate])
        keychain.lock()
        #expect(
            status {
                try keychain.delete(
                    ItemQuery(.genericPassword, matching: [.creationDate: created]),
                    caller: Fixture.app)
            } == .interactionNotAllowed)
    }
}
