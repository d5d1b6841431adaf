import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The change feed: every mutation of an item, of every kind, in commit order — in this process, across
/// processes, and after a crash.
@Suite(.dedicatedThreads) struct ChangeFeedTests {
    let directory = TemporaryDirectory()

    func account(_ name: String, sync: Bool = false) -> ItemQuery {
        ItemQuery(
            .genericPassword, matching: [.service: .string("s"), .account: .string(name)],
            synchronizable: sync ? .yes : .no)
    }

    @Test func everyKindOfMutationIsRecordedInCommitOrder() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        #expect(try keychain.lastChangeSequence == 0)
        #expect(try keychain.changes(after: 0) == [])
        let sync: [AttributeKey: AttributeValue] = [.synchronizable: .bool(true)]
        try keychain.add(Fixture.password(service: "s", account: "a"), caller: Fixture.app)  // added
        // updated
        try keychain.update(account("a"), with: ItemChanges(data: Data("NEW-SECRET-7f1".utf8)), caller: Fixture.app)
        try keychain.update(
            account("a"), with: ItemChanges(attributes: [.label: .string("LABEL-91ab")]), caller: Fixture.app)
        try keychain.add(Fixture.password(service: "s", account: "b", extra: sync), caller: Fixture.app)  // added
        try keychain.delete(account("b", sync: true), caller: Fixture.app)  // tombstoned
        // added over it
        try keychain.add(Fixture.password(service: "s", account: "b", extra: sync), caller: Fixture.app)
        try keychain.delete(account("a"), caller: Fixture.app)  // deleted
        try keychain.addAll(
            [Fixture.password(service: "s", account: "c"), Fixture.password(service: "s", account: "d")],
            caller: Fixture.app)  // added ×2
        #expect(
            try keychain.addOrUpdate(Fixture.password(service: "s", account: "c", secret: "x"), caller: Fixture.app)
                == false)
        let backup = KeychainBackup.Item(
            itemClass: .genericPassword,
            attributes: [
                .service: .string("s"), .account: .string("e"),
                .accessGroup: .string("com.example.app"),
            ],
            data: Data("e".utf8))
        _ = try keychain.restore([backup], onConflict: .skip, caller: Fixture.app)  // added (restore)

        let feed = try keychain.changes(after: 0)
        #expect(
            feed.map(\.kind) == [
                .added, .updated, .updated, .added, .tombstoned, .added, .deleted, .added, .added, .updated, .added,
            ])
        #expect(feed.map(\.sequence) == Array(1...11), "consecutive, in commit order")
        #expect(feed.map(\.origin) == Array(repeating: .request, count: 10) + [.restore])
        #expect(feed.map(\.version) == [1, 2, 3, 1, 2, 3, 3, 1, 1, 2, 1], "versions as the items went")
        // The same item keeps its id across its history; the one added over its tombstone too.
        #expect(Set(feed[0...2].map(\.itemID)).count == 1 && feed[6].itemID == feed[0].itemID)
        #expect(feed[3].itemID == feed[4].itemID && feed[4].itemID == feed[5].itemID)
        #expect(feed[3...5].allSatisfy(\.synchronizable) && !feed[0].synchronizable)
        // Paging, and the last sequence.
        #expect(try keychain.changes(after: 4, limit: 2).map(\.sequence) == [5, 6])
        #expect(try keychain.lastChangeSequence == 11)
        // A reference in the feed finds the item it names.
        let found = try keychain.copyMatching(
            ItemQuery(.genericPassword, persistentReference: feed[10].persistentReference, returning: .data),
            caller: Fixture.app)
        #expect(found.map(\.data) == [Data("e".utf8)])
        // Nothing of an item's attributes or secret is in the feed's table.
        #expect(try plaintextsFound(["NEW-SECRET-7f1", "LABEL-91ab"], under: directory.path) == [])
    }

    @Test func aFailedMutationRecordsNothing() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(Fixture.password(service: "s", account: "a"), caller: Fixture.app)
        #expect(
            status { try keychain.add(Fixture.password(service: "s", account: "a"), caller: Fixture.app) }
                == .duplicateItem)
        #expect(
            status {
                try keychain.addAll(
                    [Fixture.password(service: "s", account: "x"), Fixture.password(service: "s", account: "a")],
                    caller: Fixture.app)
            } == .duplicateItem)
        #expect(status { try keychain.delete(account("nobody"), caller: Fixture.app) } == .itemNotFound)
        keychain.lock()
        #expect(
            status { try keychain.update(account("a"), with: ItemChanges(data: Data()), caller: Fixture.app) }
                == .interactionNotAllowed)
        #expect(try keychain.changes(after: 0).map(\.kind) == [.added])
    }

    @Test func anotherProcessSeesTheChangesOfThisOneAndTheOtherWayRound() throws {
        let path = directory.file("shared.keychain")
        let keychain = try Fixture.newKeychain(in: directory, name: "shared.keychain")
        try keychain.add(Fixture.password(service: "s", account: "here"), caller: Fixture.app)
        // The helper writes three items in its own process, then prints the feed as it sees it.
        let output = try HelperProcess.run(["feed-writer", path, Fixture.passphrase, "3"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stdout == "1 added\n2 added\n3 added\n4 added\n")
        let feed = try keychain.changes(after: 0)
        #expect(feed.map(\.sequence) == [1, 2, 3, 4])
        #expect(feed.map(\.kind) == [.added, .added, .added, .added])
    }

    @Test func afterACrashTheFeedAgreesWithTheItems() throws {
        let path = directory.file("crash.keychain")
        _ = try Fixture.newKeychain(in: directory, name: "crash.keychain")
        var generator = TestSeed.generator("ChangeFeedTests.crash")
        for trial in 0..<4 {
            let log = directory.file("writer-\(trial).log")
            let writer = try SpawnedProcess(
                HelperProcess.executable, ["writer", path, Fixture.passphrase, "\(generator.next())", "8"],
                environment: ["PATH": "/usr/bin:/bin"], log: log)
            let acknowledgements = 10 + Int(generator.next() % 40)
            let deadline = Date().addingTimeInterval(30)
            while ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").count
                < acknowledgements + 1,
                Date() < deadline, writer.isRunning
            {
                usleep(2_000)
            }
            writer.stop(signal: SIGKILL)
            // Every item's current version is the last version the feed records for it, and nothing else.
            let helper = CallerIdentity(applicationIdentifier: "com.example.helper")
            let keychain = try KeychainDatabase.open(at: path)
            try keychain.unlock(with: Passphrase(Fixture.passphrase))
            var latest: [Data: Int64] = [:]
            for change in try keychain.changes(after: 0, limit: 100_000) { latest[change.itemID] = change.version }
            let items = try CrashTests.reopen(path, trial: trial, service: "crash", caller: helper).1
            #expect(latest.count == items.count, "trial \(trial): one feed history per item")
            for item in items {
                let text = String(decoding: item.data ?? Data(), as: UTF8.self)
                let version = Int64(text.split(separator: "-").last ?? "") ?? -1
                let id = try #require(
                    try keychain.changes(after: 0, limit: 100_000).last {
                        $0.persistentReference == item.persistentReference
                    }
                ).itemID
                #expect(
                    latest[id] == version,
                    "trial \(trial): the item is at version \(version), the feed says \(latest[id] ?? -1)")
            }
            let sequences = try keychain.changes(after: 0, limit: 100_000).map(\.sequence)
            #expect(sequences == Array(1...Int64(sequences.count)), "trial \(trial): no gap, no reuse")
        }
    }

    @Test func aFormatOneKeychainGetsAFeedWhenItIsMigrated() throws {
        let path = try FormatMigrationTests.copy("format-v1", into: directory)
        let keychain = try KeychainDatabase.open(at: path)
        #expect(KeychainDatabase.inspect(at: path).formatVersion == KeychainDatabase.formatVersion)
        #expect(try keychain.changes(after: 0) == [], "the feed starts at the migration")
        try keychain.unlock(with: FormatMigrationTests.passphrase)
        try FormatMigrationTests.expectFixtureContents(keychain)
        // The fixture's tombstone (synced/gone) is still there: adding the same item takes it over.
        try keychain.add(
            NewItem(
                .genericPassword,
                attributes: [
                    .service: .string("synced"), .account: .string("gone"),
                    .synchronizable: .bool(true),
                ], data: Data("back".utf8)),
            caller: FormatMigrationTests.app)
        #expect(try keychain.changes(after: 0).map { "\($0.kind) v\($0.version)" } == ["added v3"])
    }
}
