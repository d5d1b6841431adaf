import Foundation
import Latchkey
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

/// Format v5: a new synchronizable item is marked for the next push (`sync_dirty`) by the code that stores
/// it, not by a trigger; a v4 file loses the trigger when it is opened and keeps every mark it had. A batch
/// add writes its change-feed entries and marks many to a statement: the same rows as single adds.
@Suite(.dedicatedThreads) struct DirtyMarkTests {
    let directory = TemporaryDirectory()

    static func synced(_ account: String) -> NewItem {
        Fixture.password(service: "sync", account: account, extra: [.synchronizable: .bool(true)])
    }

    static func marks(_ path: String) throws -> Int64? { try RawFile.integer(path, "SELECT count(*) FROM sync_dirty") }

    static func insertTriggers(_ path: String) throws -> Int64? {
        try RawFile.integer(
            path, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = 'items_sync_dirty_insert'")
    }

    @Test func aFormatFourKeychainLosesTheInsertTriggerAndKeepsItsMarks() throws {
        let path = directory.file("v4.keychain")
        do {
            let keychain = try KeychainDatabase.create(
                at: path, passphrase: Passphrase(Fixture.passphrase), keyDerivation: .minimum)
            try keychain.add(Self.synced("before"), caller: Fixture.app)
        }
        #expect(try Self.marks(path) == 1)
        // Back to format v4: the trigger it had, and its version number.
        try RawFile.execute(
            path,
            """
            CREATE TRIGGER items_sync_dirty_insert AFTER INSERT ON items WHEN NEW.sync = 1
                            BEGIN INSERT OR IGNORE INTO sync_dirty (item) VALUES (NEW.id); END
            """)
        // Without what later formats added (v6: access lists and the access log).
        try RawFile.execute(path, "DROP TABLE item_access")
        try RawFile.execute(path, "DROP TABLE access_log")
        try RawFile.execute(path, "PRAGMA user_version = 4")
        // (Not `inspect`: it opens the keychain, which migrates it.)
        #expect(try RawFile.integer(path, "PRAGMA user_version") == 4)
        #expect(try Self.insertTriggers(path) == 1)

        let keychain = try KeychainDatabase.open(at: path)
        #expect(KeychainDatabase.formatVersion >= 5)
        #expect(try RawFile.integer(path, "PRAGMA user_version") == Int64(KeychainDatabase.formatVersion))
        #expect(try Self.insertTriggers(path) == 0)
        #expect(try Self.marks(path) == 1, "the mark made under v4 stays")
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        try keychain.add(Self.synced("after"), caller: Fixture.app)
        #expect(try Self.marks(path) == 2)
        try keychain.add(Fixture.password(service: "local", account: "x"), caller: Fixture.app)
        #expect(try Self.marks(path) == 2, "an item that does not sync is not marked")
        try keychain.addAll(
            [Self.synced("b1"), Fixture.password(service: "local", account: "y"), Self.synced("b2")],
            caller: Fixture.app)
        #expect(try Self.marks(path) == 4)
        #expect(try keychain.verifyIntegrity().isHealthy)
        #expect(
            try keychain.copyMatching(
                ItemQuery(.genericPassword, matching: [.service: .string("sync")], synchronizable: .yes, limit: .all),
                caller: Fixture.app
            ).count == 4)
    }

    /// Updates and deletions are still marked by their triggers; adding over an item's own tombstone (an
    /// update of its row) too.
    @Test func updatesDeletionsAndAddsOverATombstoneAreMarked() throws {
        let path = directory.file("marks.keychain")
        let keychain = try KeychainDatabase.create(
            at: path, passphrase: Passphrase(Fixture.passphrase), keyDerivation: .minimum)
        try keychain.add(Self.synced("a"), caller: Fixture.app)
        try RawFile.execute(path, "DELETE FROM sync_dirty")
        let query = ItemQuery(
            .genericPassword, matching: [.service: .string("sync"), .account: .string("a")], synchronizable: .yes)
        try keychain.update(query, with: ItemChanges(data: Data("new".utf8)), caller: Fixture.app)
        #expect(try Self.marks(path) == 1)
        try RawFile.execute(path, "DELETE FROM sync_dirty")
        #expect(try keychain.delete(query, caller: Fixture.app) == 1)
        #expect(try Self.marks(path) == 1, "the tombstone is marked")
        try RawFile.execute(path, "DELETE FROM sync_dirty")
        try keychain.add(Self.synced("a"), caller: Fixture.app)
        #expect(try Self.marks(path) == 1, "added over its tombstone")
        #expect(try keychain.changes(after: 0).map(\.kind) == [.added, .updated, .tombstoned, .added])
    }

    /// 300 items: statements of 256, 32, 8 and 4 rows. One `added` entry per item, numbered without a gap,
    /// each naming its item; one mark per synchronizable item.
    @Test func aBatchAddRecordsOneChangePerItemWithoutAGap() throws {
        let path = directory.file("batch.keychain")
        let keychain = try KeychainDatabase.create(
            at: path, passphrase: Passphrase(Fixture.passphrase), keyDerivation: .minimum)
        try keychain.add(Fixture.password(service: "first", account: "0"), caller: Fixture.app)
        let items = (0..<300).map { number in
            number % 3 == 0 ? Self.synced("\(number)") : Fixture.password(service: "plain", account: "\(number)")
        }
        try keychain.addAll(items, caller: Fixture.app)
        let changes = try keychain.changes(after: 0)
        #expect(changes.map(\.sequence) == Array(1...301))
        #expect(changes.allSatisfy { $0.kind == .added && $0.origin == .request && $0.version == 1 })
        #expect(Set(changes.map(\.itemID)).count == 301)
        #expect(changes.filter(\.synchronizable).count == 100)
        #expect(try Self.marks(path) == 100)
        for change in changes.dropFirst().prefix(40) {
            let found = try keychain.copyMatching(
                ItemQuery(
                    .genericPassword, matching: [:], synchronizable: .any,
                    persistentReference: change.persistentReference, returning: .attributes),
                caller: Fixture.app)
            #expect(found.count == 1)
            #expect((found.first?[.synchronizable] == .number(1)) == change.synchronizable)
        }
        // A batch that fails (its last item duplicates one) leaves no entry and no mark.
        #expect(
            status { try keychain.addAll([Self.synced("new"), Self.synced("0")], caller: Fixture.app) }
                == .duplicateItem)
        #expect(try keychain.changes(after: 0).count == 301)
        #expect(try Self.marks(path) == 100)
    }
}
