import Foundation
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

@testable import Latchkey
@testable import LatchkeyEngine

/// New keychains get the current format at once (created as the migration ends, or copied from an empty
/// database the migration made) rather than by replaying every migration step; what they get must be
/// exactly what the steps make, object by object, in the same order.
@Suite(.dedicatedThreads) struct NewKeychainFormatTests {
    let directory = TemporaryDirectory()

    /// What replaying every migration step makes of an empty database: its objects in the order they were
    /// made, with their SQL, and the two header values.
    static func described(_ db: Connection) throws -> [String] {
        var objects: [String] = []
        try db.forEachRow("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid") { row in
            objects.append(
                [row.text(0), row.text(1), row.text(2), row.text(3)].map { $0 ?? "NULL" }.joined(separator: "|"))
        }
        objects.append("user_version \(try db.integer("PRAGMA user_version") ?? -1)")
        objects.append("application_id \(try db.integer("PRAGMA application_id") ?? -1)")
        return objects
    }

    static func migrated() throws -> [String] {
        let db = try Connection(path: ":memory:", mode: .memory)
        #expect(try KeychainSchema.migrator.migrate(db) == Migrator.Outcome(from: 0, to: KeychainSchema.currentVersion))
        return try described(db)
    }

    @Test func creatingTheCurrentFormatMakesWhatTheMigrationMakes() throws {
        let db = try Connection(path: ":memory:", mode: .memory)
        try KeychainSchema.createCurrent(db)
        let made = try Self.described(db)
        #expect(made == (try Self.migrated()))
        #expect(made.contains { $0.hasPrefix("table|sqlite_sequence|") })
        #expect(made.last == "application_id \(KeychainSchema.applicationID)")
        #expect(made.dropLast().last == "user_version \(KeychainSchema.currentVersion)")
    }

    @Test func aNewInMemoryDatabaseIsTheMigratedOne() throws {
        #expect(try Self.described(try KeychainSchema.newInMemoryDatabase()) == (try Self.migrated()))
    }

    @Test func aNewKeychainFileHasTheMigratedObjectsInTheirOrder() throws {
        let path = directory.file("login.keychain")
        _ = try KeychainDatabase.create(at: path, passphrase: Passphrase("new format"), keyDerivation: .minimum)
        let db = try Connection(path: path, mode: .readOnly)
        #expect(try Self.described(db) == (try Self.migrated()))
        let reopened = try KeychainDatabase.open(at: path)  // Checks the schema against the migrated one.
        try reopened.unlock(with: Passphrase("new format"))
        #expect(try reopened.verifyIntegrity().isHealthy)
    }

    @Test func creatingTheFormatOnADatabaseThatHasTablesIsRefused() throws {
        let db = try Connection(path: ":memory:", mode: .memory)
        try db.execute("CREATE TABLE other (a INTEGER)")
        #expect(status { try KeychainSchema.createCurrent(db) } == .internal)
        #expect(
            try Self.described(db) == [
                "table|other|other|CREATE TABLE other (a INTEGER)", "user_version 0", "application_id 0",
            ])
        let versioned = try Connection(path: ":memory:", mode: .memory)
        try versioned.execute("PRAGMA user_version = 3")
        #expect(status { try KeychainSchema.createCurrent(versioned) } == .internal)
        #expect(try versioned.integer("SELECT count(*) FROM sqlite_master") == 0)
    }

    @Test func inMemoryKeychainsShareNothing() throws {
        let app = CallerIdentity(applicationIdentifier: "com.example.app")
        let first = KeychainDatabase.inMemory()
        let second = KeychainDatabase.inMemory()
        try first.add(
            NewItem(
                .genericPassword, attributes: [.service: .string("s"), .account: .string("a")], data: Data("one".utf8)),
            caller: app)
        let query = ItemQuery(.genericPassword, matching: [.service: .string("s")], returning: .data)
        #expect(try first.copyMatching(query, caller: app).map(\.data) == [Data("one".utf8)])
        #expect(status { _ = try second.copyMatching(query, caller: app) } == .itemNotFound)
        try second.add(
            NewItem(
                .genericPassword, attributes: [.service: .string("s"), .account: .string("a")], data: Data("two".utf8)),
            caller: app)
        #expect(try second.copyMatching(query, caller: app).map(\.data) == [Data("two".utf8)])
        #expect(try first.copyMatching(query, caller: app).map(\.data) == [Data("one".utf8)])
        #expect(try KeychainDatabase.inMemory().verifyIntegrity().isHealthy)
    }
}
