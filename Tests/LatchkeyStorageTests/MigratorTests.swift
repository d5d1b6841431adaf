import Foundation
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

@Suite(.dedicatedThreads) struct MigratorTests {
    let migrator = Migrator(steps: [
        .init(version: 1) { try $0.execute("CREATE TABLE t (a INTEGER)") },
        .init(version: 2) { try $0.execute("ALTER TABLE t ADD COLUMN b TEXT") },
    ])

    @Test func migratesAFreshDatabaseToTheLatestVersion() throws {
        let db = try Connection(path: ":memory:", mode: .memory)
        #expect(try migrator.migrate(db) == Migrator.Outcome(from: 0, to: 2))
        #expect(try migrator.currentVersion(of: db) == 2)
        try db.run("INSERT INTO t (a, b) VALUES (?, ?)", [.integer(1), .text("x")])
    }

    @Test func migratesFromAnOlderVersionStepByStep() throws {
        let db = try Connection(path: ":memory:", mode: .memory)
        _ = try Migrator(steps: [migratorStep1]).migrate(db)
        try db.run("INSERT INTO t (a) VALUES (?)", [.integer(7)])
        #expect(try migrator.migrate(db) == Migrator.Outcome(from: 1, to: 2))
        #expect(try db.integer("SELECT a FROM t") == 7)
    }

    @Test func refusesANewerDatabaseAndChangesNothing() throws {
        let db = try Connection(path: ":memory:", mode: .memory)
        try db.execute("PRAGMA user_version = 9")
        #expect(throws: Migrator.Failure.newerVersion(found: 9, supported: 2)) { try migrator.migrate(db) }
        #expect(try migrator.currentVersion(of: db) == 9)
        #expect(try db.integer("SELECT count(*) FROM sqlite_master") == 0)
    }

    @Test func aFailingStepRollsEverythingBack() throws {
        let db = try Connection(path: ":memory:", mode: .memory)
        let broken = Migrator(steps: [
            migratorStep1,
            .init(version: 2) { try $0.execute("THIS IS NOT SQL") },
        ])
        #expect(throws: StorageError.self) { try broken.migrate(db) }
        #expect(try broken.currentVersion(of: db) == 0)
        #expect(try db.integer("SELECT count(*) FROM sqlite_master") == 0)
    }

    private var migratorStep1: Migrator.Step { .init(version: 1) { try $0.execute("CREATE TABLE t (a INTEGER)") } }
}
