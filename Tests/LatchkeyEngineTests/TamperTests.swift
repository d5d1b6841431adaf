import Foundation
import Latchkey
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

/// Damage to the stored rows: every changed byte, swapped blob or moved row makes that item fail with
/// errSecDecode — never wrong plaintext — while every other item still reads.
@Suite(.dedicatedThreads) struct TamperTests {
    let directory = TemporaryDirectory()
    var path: String { directory.file("t.keychain") }

    func filled() throws -> KeychainDatabase {
        let keychain = try Fixture.newKeychain(in: directory, name: "t.keychain")
        for account in ["a", "b", "c"] {
            try keychain.add(
                Fixture.password(
                    service: "t", account: account, secret: "secret-\(account)",
                    extra: [.label: .string("label \(account)")]), caller: Fixture.app)
        }
        try keychain.add(Fixture.password(service: "t", account: "o", secret: "secret-o"), caller: Fixture.other)
        return keychain
    }

    /// The row_id of the item with account `account`, found by the order of insertion.
    func rowID(_ account: String) -> Int64 { ["a": 1, "b": 2, "c": 3, "o": 4][account]! }

    /// What a read gave: the secret, or the failure status.
    enum Outcome: Equatable {
        case success(Data)
        case failure(KeychainStatus)
    }

    /// What reading `account` gives: its secret, or the failure status.
    func read(_ keychain: KeychainDatabase, _ account: String, caller: CallerIdentity = Fixture.app) -> Outcome {
        do {
            let found = try keychain.copyMatching(
                ItemQuery(
                    .genericPassword, matching: [.service: .string("t"), .account: .string(account)],
                    synchronizable: .any, returning: [.data, .attributes]), caller: caller)
            return .success(found.first?.data ?? Data())
        } catch {
            return .failure(error.status)
        }
    }

    func expectOnlyDamaged(_ keychain: KeychainDatabase, _ damaged: Set<String>, _ context: String) {
        for account in ["a", "b", "c"] {
            let result = read(keychain, account)
            if damaged.contains(account) {
                #expect(result == .failure(.decode), "\(context): \(account) should be damaged")
            } else {
                #expect(result == .success(Data("secret-\(account)".utf8)), "\(context): \(account) should read")
            }
        }
    }

    @Test(arguments: ["item_key", "attrs", "data"])
    func everyFlippedByteOfACiphertextIsDetected(_ column: String) throws {
        let keychain = try filled()
        let original = try #require(try RawFile.blob(path, "SELECT \(column) FROM items WHERE row_id = 2"))
        let db = try Connection(path: path, mode: .readWrite)
        for index in 0..<original.count {
            var damaged = original
            damaged[index] ^= 0x20
            try db.run("UPDATE items SET \(column) = ? WHERE row_id = 2", [.blob(damaged)])
            expectOnlyDamaged(keychain, ["b"], "\(column) byte \(index)")
        }
        try db.run("UPDATE items SET \(column) = ? WHERE row_id = 2", [.blob(original)])
        expectOnlyDamaged(keychain, [], "restored")
        #expect(try keychain.verifyIntegrity().isHealthy)
    }

    @Test(arguments: [
        "UPDATE items SET pdmn = 'ck' WHERE row_id = 2",
        "UPDATE items SET pdmn = 'dk' WHERE row_id = 2",
        "UPDATE items SET version = version + 1 WHERE row_id = 2",
        "UPDATE items SET id = randomblob(16) WHERE row_id = 2",
        "UPDATE items SET idx = substr(idx, 17) WHERE row_id = 2",
        "UPDATE items SET idx = x'' WHERE row_id = 2",
        "UPDATE items SET item_key = substr(item_key, 1, 20) WHERE row_id = 2",
        "UPDATE items SET attrs = x'' WHERE row_id = 2",
        "UPDATE items SET data = NULL WHERE row_id = 2",
        "UPDATE items SET pdmn = 'nonsense' WHERE row_id = 2",
    ])
    func changedPlaintextColumnsAreDetected(_ sql: String) throws {
        let keychain = try filled()
        try RawFile.execute(path, sql)
        expectOnlyDamaged(keychain, ["b"], sql)
        let report = try keychain.verifyIntegrity()
        #expect(report.damaged.count == 1)
    }

    @Test func theSyncFlagAndClassColumnsAreBound() throws {
        let keychain = try filled()
        try RawFile.execute(path, "UPDATE items SET sync = 1 WHERE row_id = 2")
        expectOnlyDamaged(keychain, ["b"], "sync flipped")
        try RawFile.execute(path, "UPDATE items SET sync = 0, class = 'inet' WHERE row_id = 2")
        let found = status {
            _ = try keychain.copyMatching(
                ItemQuery(.internetPassword, limit: .all, returning: .data),
                caller: Fixture.app)
        }
        #expect(found == .decode)
    }

    @Test(arguments: ["item_key", "attrs", "data"])
    func swappingBlobsBetweenRowsIsDetectedForBoth(_ column: String) throws {
        let keychain = try filled()
        let first = try #require(try RawFile.blob(path, "SELECT \(column) FROM items WHERE row_id = 1"))
        let second = try #require(try RawFile.blob(path, "SELECT \(column) FROM items WHERE row_id = 2"))
        try RawFile.execute(path, "UPDATE items SET \(column) = ? WHERE row_id = 1", [.blob(second)])
        try RawFile.execute(path, "UPDATE items SET \(column) = ? WHERE row_id = 2", [.blob(first)])
        expectOnlyDamaged(keychain, ["a", "b"], "swapped \(column)")
        #expect(try keychain.verifyIntegrity().damaged.count == 2)
    }

    @Test func swappingWholeRowsContentsIsDetected() throws {
        let keychain = try filled()
        try RawFile.execute(
            path,
            """
            UPDATE items SET item_key = (SELECT item_key FROM items WHERE row_id = 3),
                             attrs = (SELECT attrs FROM items WHERE row_id = 3),
                             data = (SELECT data FROM items WHERE row_id = 3) WHERE row_id = 1
            """)
        expectOnlyDamaged(keychain, ["a"], "row 1 given row 3's blobs")
    }

    @Test func aRowMovedToAnotherAccessGroupFailsThereAndVanishesHere() throws {
        let keychain = try filled()
        // Move b into the other application's group by copying that row's group digest.
        try RawFile.execute(path, "UPDATE items SET agrp = (SELECT agrp FROM items WHERE row_id = 4) WHERE row_id = 2")
        #expect(read(keychain, "b") == .failure(.itemNotFound))
        #expect(read(keychain, "b", caller: Fixture.other) == .failure(.decode))
        #expect(read(keychain, "o", caller: Fixture.other) == .success(Data("secret-o".utf8)))
        let report = try keychain.verifyIntegrity()
        #expect(report.damaged.count == 1)
        #expect(report.damaged.first?.reason == "an item's key failed authentication; the item is damaged")
    }

    @Test func aDamagedPrimaryKeyDigestHidesTheItemFromExactLookupsAndListingsReportIt() throws {
        let keychain = try filled()
        try RawFile.execute(path, "UPDATE items SET pk = randomblob(32) WHERE row_id = 2")
        #expect(read(keychain, "b") == .failure(.itemNotFound))
        let listing = try keychain.copyMatching(Fixture.query(service: "t", limit: .all), caller: Fixture.app)
        #expect(listing.map(\.data) == [Data("secret-a".utf8), Data("secret-c".utf8)])
        #expect(
            status {
                _ = try keychain.copyMatching(
                    ItemQuery(.genericPassword, matching: [.label: .string("label b")]), caller: Fixture.app)
            } == .decode)
        #expect(try keychain.verifyIntegrity().damaged.count == 1)
    }

    @Test func duplicatedAndDeletedIndexRowsNeverGiveWrongResults() throws {
        let keychain = try filled()
        // Point every index entry of b at a as well, and drop c's entries.
        try RawFile.execute(path, "INSERT OR IGNORE INTO item_index SELECT digest, 1 FROM item_index WHERE item = 2")
        try RawFile.execute(path, "DELETE FROM item_index WHERE item = 3")
        let byLabel = try keychain.copyMatching(
            ItemQuery(.genericPassword, matching: [.label: .string("label b")], limit: .all, returning: .data),
            caller: Fixture.app)
        #expect(byLabel.map(\.data) == [Data("secret-b".utf8)])
        #expect(
            status {
                _ = try keychain.copyMatching(
                    ItemQuery(.genericPassword, matching: [.label: .string("label c")]), caller: Fixture.app)
            } == .itemNotFound)
        let report = try keychain.verifyIntegrity()
        #expect(report.damaged.map(\.reason) == ["an index entry of the item is missing"])
    }

    @Test func aDamagedItemCanBeDeletedByItsPersistentReference() throws {
        let keychain = try filled()
        try RawFile.execute(path, "UPDATE items SET attrs = zeroblob(80) WHERE row_id = 2")
        let report = try keychain.verifyIntegrity()
        let damaged = try #require(report.damaged.first)
        try keychain.delete(
            ItemQuery(.genericPassword, persistentReference: damaged.persistentReference, limit: .all),
            caller: Fixture.app)
        #expect(try keychain.verifyIntegrity().isHealthy)
        #expect(read(keychain, "a") == .success(Data("secret-a".utf8)))
        #expect(read(keychain, "c") == .success(Data("secret-c".utf8)))
        #expect(read(keychain, "b") == .failure(.itemNotFound))
    }
}
