import Foundation
import Latchkey
import LatchkeyTestSupport
import Synchronization
import Testing

/// Versioned snapshots (`KeychainDatabase.takeSnapshot`, `SnapshotCopy`, `restoreVersions`): one item
/// brought back without touching the others, a deleted item brought back, old snapshots pruned, and a
/// snapshot taken while another thread writes is the keychain at one commit.
@Suite(.dedicatedThreads) struct SnapshotTests {
    let directory = TemporaryDirectory()
    var snapshots: String { directory.file("snapshots") }

    func secret(_ keychain: KeychainDatabase, _ account: String) throws -> String? {
        let found = try keychain.copyMatching(Fixture.query(service: "s", account: account), caller: Fixture.app)
        return found.first?.data.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The snapshot's items, as `latchkey backup restore` reads them.
    func versions(_ snapshot: KeychainSnapshot) throws -> [SnapshotItem] {
        let copy = try SnapshotCopy(snapshot.path, environment: ["TMPDIR": directory.path])
        defer { copy.close() }
        try copy.keychain.unlock(with: Passphrase(Fixture.passphrase))
        return try copy.keychain.copyMatching(
            ItemQuery(
                .genericPassword, synchronizable: .any, limit: .all,
                returning: [.attributes, .data, .persistentReference]),
            caller: Fixture.app, presence: Confirming()
        ).map {
            SnapshotItem(
                item: KeychainBackup.Item(itemClass: $0.itemClass, attributes: $0.attributes, data: $0.data),
                reference: $0.persistentReference)
        }
    }

    @Test func oneItemGoesBackToItsVersionAndTheOthersStay() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(Fixture.password(service: "s", account: "a", secret: "a-one"), caller: Fixture.app)
        try keychain.add(Fixture.password(service: "s", account: "b", secret: "b-one"), caller: Fixture.app)
        let reference = try #require(
            try keychain.copyMatching(
                Fixture.query(service: "s", account: "a", returning: [.persistentReference]), caller: Fixture.app
            ).first?.persistentReference)
        let snapshot = try keychain.takeSnapshot(into: snapshots, keep: 5)
        #expect(snapshot.itemCount == 2 && snapshot.sequence == 2)
        try keychain.update(
            Fixture.query(service: "s", account: "a", returning: []),
            with: ItemChanges(attributes: [.label: .string("added later")], data: Data("a-two".utf8)),
            caller: Fixture.app)
        try keychain.update(
            Fixture.query(service: "s", account: "b", returning: []), with: ItemChanges(data: Data("b-two".utf8)),
            caller: Fixture.app)

        let old = try #require(try versions(snapshot).first { $0.reference == reference })
        let summary = try keychain.restoreVersions([old], caller: Fixture.app)
        #expect(summary == SnapshotRestoreSummary(updated: 1, added: 0, removed: 0))
        #expect(try secret(keychain, "a") == "a-one")
        #expect(try secret(keychain, "b") == "b-two", "the other item is not touched")
        let restored = try #require(
            try keychain.copyMatching(
                Fixture.query(service: "s", account: "a", returning: [.attributes, .persistentReference]),
                caller: Fixture.app
            ).first)
        #expect(restored.persistentReference == reference, "the same item, not a copy")
        #expect(restored[.label] == nil, "what it gained since goes")
        #expect(try keychain.changes(after: 4).map(\.origin) == [.restore])
    }

    /// The keychain passphrase, as `latchkey backup restore` confirms protected items with it.
    struct Confirming: UserPresenceVerifier {
        func confirm(_ request: PresenceRequest, verify: (Passphrase) throws(KeychainError) -> Void)
            throws(KeychainError)
        { try verify(Passphrase(Fixture.passphrase)) }
    }

    @Test func protectedThisDeviceOnlyAndSynchronizableItemsGoBackToo() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let protected = AccessControl(protection: .whenUnlocked, flags: .userPresence)
        try keychain.add(
            Fixture.password(
                service: "s", account: "p", secret: "p-one", extra: [.accessControl: protected.attributeValue]),
            caller: Fixture.app)
        try keychain.add(
            Fixture.password(service: "s", account: "d", secret: "d-one", extra: [.accessible: .string("aku")]),
            caller: Fixture.app)
        try keychain.add(
            Fixture.password(service: "s", account: "y", secret: "y-one", extra: [.synchronizable: .bool(true)]),
            caller: Fixture.app)
        let snapshot = try keychain.takeSnapshot(into: snapshots, keep: 5)
        for (account, sync) in [("p", false), ("d", false), ("y", true)] {
            var query = Fixture.query(service: "s", account: account, returning: [])
            query.synchronizable = sync ? .yes : .no
            _ = try keychain.update(
                query, with: ItemChanges(data: Data("\(account)-two".utf8)), caller: Fixture.app, presence: Confirming()
            )
        }
        let summary = try keychain.restoreVersions(try versions(snapshot), caller: Fixture.app)
        #expect(summary == SnapshotRestoreSummary(updated: 3, added: 0, removed: 0))
        let found = try keychain.copyMatching(
            ItemQuery(.genericPassword, synchronizable: .any, limit: .all, returning: [.attributes, .data]),
            caller: Fixture.app, presence: Confirming())
        let byAccount = Dictionary(uniqueKeysWithValues: found.map { ($0[.account]?.stringValue ?? "", $0) })
        #expect(
            byAccount.mapValues { $0.data.map { String(decoding: $0, as: UTF8.self) } } == [
                "p": "p-one", "d": "d-one", "y": "y-one",
            ])
        #expect(byAccount["p"]?[.accessControl].flatMap(AccessControl.init(attributeValue:)) == protected)
        #expect(byAccount["d"]?[.accessible]?.stringValue == "aku")
        #expect(byAccount["y"]?[.synchronizable] == .number(1))
    }

    @Test func anItemDeletedSinceComesBack() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(Fixture.password(service: "s", account: "a", secret: "a-one"), caller: Fixture.app)
        let snapshot = try keychain.takeSnapshot(into: snapshots, keep: 5)
        try keychain.delete(Fixture.query(service: "s", account: "a", returning: []), caller: Fixture.app)
        let summary = try keychain.restoreVersions(try versions(snapshot), caller: Fixture.app)
        #expect(summary == SnapshotRestoreSummary(updated: 0, added: 1, removed: 0))
        #expect(try secret(keychain, "a") == "a-one")
    }

    @Test func anItemWhoseKeyWasTakenIsRefusedAndNothingChanges() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(Fixture.password(service: "s", account: "a", secret: "a-one"), caller: Fixture.app)
        let snapshot = try keychain.takeSnapshot(into: snapshots, keep: 5)
        try keychain.delete(Fixture.query(service: "s", account: "a", returning: []), caller: Fixture.app)
        try keychain.add(Fixture.password(service: "s", account: "a", secret: "a-new"), caller: Fixture.app)
        #expect(
            status { _ = try keychain.restoreVersions(try versions(snapshot), caller: Fixture.app) } == .duplicateItem)
        #expect(try secret(keychain, "a") == "a-new")
    }

    func reference(_ keychain: KeychainDatabase, _ account: String) throws -> Data {
        try #require(
            try keychain.copyMatching(
                Fixture.query(service: "s", account: account, returning: [.persistentReference]), caller: Fixture.app
            ).first?.persistentReference)
    }

    @Test func removalsAndRestoresAreOneTransaction() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(Fixture.password(service: "s", account: "a", secret: "a-one"), caller: Fixture.app)
        let snapshot = try keychain.takeSnapshot(into: snapshots, keep: 5)
        // Since: a deleted and added again (another item with its primary key), b added.
        try keychain.delete(Fixture.query(service: "s", account: "a", returning: []), caller: Fixture.app)
        try keychain.add(Fixture.password(service: "s", account: "a", secret: "a-new"), caller: Fixture.app)
        try keychain.add(Fixture.password(service: "s", account: "b", secret: "b-new"), caller: Fixture.app)
        let newA = try reference(keychain, "a")
        let b = try reference(keychain, "b")
        let old = try versions(snapshot)
        // Without removing the new a, the old one cannot come back: nothing changes, b's removal included.
        #expect(
            status { _ = try keychain.restoreVersions(old, removing: [b], caller: Fixture.app) } == .duplicateItem)
        #expect(try secret(keychain, "a") == "a-new" && secret(keychain, "b") == "b-new")
        let summary = try keychain.restoreVersions(old, removing: [newA, b], caller: Fixture.app)
        #expect(summary == SnapshotRestoreSummary(updated: 0, added: 1, removed: 2))
        #expect(try secret(keychain, "a") == "a-one")
        #expect(status { _ = try secret(keychain, "b") } == .itemNotFound)
        #expect(try keychain.changes(after: 4).map(\.kind) == [.deleted, .deleted, .added])
        #expect(try keychain.changes(after: 4).map(\.origin) == [.restore, .restore, .restore])
    }

    @Test func theOldestBeyondKeepAreRemovedAndDeadWritersFilesToo() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        var taken: [KeychainSnapshot] = []
        for index in 0..<5 {
            try keychain.add(Fixture.password(service: "s", account: "\(index)"), caller: Fixture.app)
            taken.append(
                try keychain.takeSnapshot(into: snapshots, keep: 3, now: start.addingTimeInterval(Double(index) * 60)))
        }
        // A writer killed mid-write (its pid gone) left its temporary file; the next snapshot removes it.
        let stale = snapshots + "/.test.lksnapshot.writing-2147483646-0011aabbccdd"
        _ = FileManager.default.createFile(atPath: stale, contents: Data("partial".utf8))
        taken.append(try keychain.takeSnapshot(into: snapshots, keep: 3, now: start.addingTimeInterval(300)))
        let listing = try SnapshotDirectory.list(snapshots, keychainID: try keychain.keychainID)
        #expect(listing.snapshots.map(\.path) == taken.suffix(3).map(\.path))
        #expect(listing.snapshots.map(\.itemCount) == [4, 5, 5])
        #expect(taken[0].path == snapshots + "/test.20270115T080000.000Z.lksnapshot")
        #expect(!FileManager.default.fileExists(atPath: stale))
        #expect(try FileManager.default.contentsOfDirectory(atPath: snapshots).count == 3)
    }

    @Test func aDamagedSnapshotIsFoundAndNeverOpened() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(Fixture.password(service: "s", account: "a"), caller: Fixture.app)
        let snapshot = try keychain.takeSnapshot(into: snapshots, keep: 5)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: snapshot.path))
        let original = bytes
        // One byte changed anywhere in the database: the digest no longer matches.
        for offset in [60, bytes.count / 2, bytes.count - 40] {
            bytes = original
            bytes[offset] ^= 0x01
            try bytes.write(to: URL(fileURLWithPath: snapshot.path))
            let error = try #require(throws: KeychainError.self) {
                _ = try SnapshotCopy(snapshot.path, environment: ["TMPDIR": directory.path])
            }
            #expect(error.status == .decode)
            #expect(
                error.detail
                    == "\(snapshot.path) is damaged: its digest does not match its contents; it is not restored")
        }
        // Truncated: the header's promise is broken, which a listing sees too.
        try original.prefix(original.count - 1).write(to: URL(fileURLWithPath: snapshot.path))
        let error = try #require(throws: KeychainError.self) { _ = try KeychainSnapshot.header(of: snapshot.path) }
        #expect(error.status == .decode)
        #expect(
            error.detail
                == "\(snapshot.path) is damaged: it has \(original.count - 1) bytes, not the \(original.count) its header promises"
        )
        let listing = try SnapshotDirectory.list(snapshots, keychainID: nil)
        #expect(listing.snapshots.isEmpty && listing.damaged.map(\.path) == [snapshot.path])
        // Not a snapshot at all.
        try Data("SQLite format 3\0".utf8).write(to: URL(fileURLWithPath: snapshot.path))
        #expect(status { _ = try KeychainSnapshot.header(of: snapshot.path) } == .decode)
        // Nothing was left in the temporary directory by the refused opens.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
                $0.hasPrefix("latchkey-snapshot-")
            } == [])
    }

    @Test func aDirectoryThatCannotBeMadeIsAnIOError() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        _ = FileManager.default.createFile(atPath: directory.file("plain-file"), contents: Data())
        let error = try #require(throws: KeychainError.self) {
            _ = try keychain.takeSnapshot(into: directory.file("plain-file") + "/snapshots", keep: 5)
        }
        #expect(error.status == .io)
        #expect(status { _ = try keychain.takeSnapshot(into: snapshots, keep: 0) } == .param)
    }

    @Test func aSnapshotTakenWhileAnotherThreadWritesIsOneCommit() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let writing = Mutex(true)
        let finished = DispatchSemaphore(value: 0)
        let writer = Thread {
            defer { finished.signal() }
            var batch = 0
            while writing.withLock({ $0 }) {
                // Ten items in one transaction: a snapshot holds all ten or none.
                _ = try? keychain.addAll(
                    (0..<10).map { Fixture.password(service: "s", account: "\(batch)-\($0)") }, caller: Fixture.app)
                batch += 1
            }
        }
        writer.start()
        var seen: [KeychainSnapshot] = []
        while seen.count < 12 {
            seen.append(try keychain.takeSnapshot(into: snapshots, keep: 100))
        }
        writing.withLock { $0 = false }
        finished.wait()
        for snapshot in seen {
            #expect(snapshot.itemCount % 10 == 0, "\(snapshot.itemCount) items: a transaction cut in two")
            #expect(Int64(snapshot.itemCount) == snapshot.sequence, "the feed and the items agree")
            let copy = try SnapshotCopy(snapshot.path, environment: ["TMPDIR": directory.path])
            #expect(try copy.keychain.lastChangeSequence == snapshot.sequence)
            try copy.keychain.unlock(with: Passphrase(Fixture.passphrase))
            let items =
                snapshot.itemCount == 0
                ? 0
                : try copy.keychain.copyMatching(
                    ItemQuery(.genericPassword, limit: .all, returning: [.attributes]), caller: Fixture.app
                ).count
            #expect(items == snapshot.itemCount)
            copy.close()
        }
        #expect(seen.last!.itemCount > 0 || seen.first!.itemCount == 0)
    }
}
