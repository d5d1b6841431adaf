import Foundation
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

/// `Connection.image()` and `Connection(image:)`: an in-memory database that starts as a copy of another
/// one's pages, and is from then on a database of its own.
@Suite(.dedicatedThreads) struct DatabaseImageTests {
    func original() throws -> Connection {
        let db = try Connection(path: ":memory:", mode: .memory)
        try db.execute(
            """
            CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT NOT NULL);
            CREATE INDEX t_by_v ON t (v);
            INSERT INTO t (v) VALUES ('a'), ('b');
            PRAGMA user_version = 7;
            """)
        return db
    }

    @Test func aCopyHasTheOriginalsSchemaRowsAndVersion() throws {
        let copy = try Connection(image: try original().image())
        #expect(try copy.integer("PRAGMA user_version") == 7)
        var rows: [String] = []
        try copy.forEachRow("SELECT v FROM t ORDER BY id") { rows.append($0.text(0) ?? "?") }
        #expect(rows == ["a", "b"])
        var objects: [String] = []
        try copy.forEachRow("SELECT type || ' ' || name FROM sqlite_master ORDER BY rowid") {
            objects.append($0.text(0) ?? "?")
        }
        #expect(objects == ["table t", "table sqlite_sequence", "index t_by_v"])
        #expect(try copy.integer("SELECT seq FROM sqlite_sequence WHERE name = 't'") == 2)
    }

    @Test func aCopyIsADatabaseOfItsOwn() throws {
        let db = try original()
        let image = try db.image()
        let first = try Connection(image: image)
        let second = try Connection(image: image)
        try first.run("INSERT INTO t (v) VALUES (?)", [.text("only in the first")])
        #expect(try first.integer("SELECT count(*) FROM t") == 3)
        #expect(try second.integer("SELECT count(*) FROM t") == 2)
        #expect(try db.integer("SELECT count(*) FROM t") == 2)
        #expect(try db.image() == image)
    }

    @Test func aCopyGrowsAndRollsBack() throws {
        let copy = try Connection(image: try original().image())
        #expect(try copy.blob("PRAGMA journal_mode").map { String(decoding: $0, as: UTF8.self) } == "memory")
        try copy.transaction(writing: true) {
            for index in 0..<2_000 {
                try copy.run("INSERT INTO t (v) VALUES (?)", [.text(String(repeating: "x", count: 100) + "\(index)")])
            }
        }
        #expect(try copy.integer("SELECT count(*) FROM t") == 2_002)
        struct Abandon: Error {}
        #expect(throws: Abandon.self) {
            try copy.transaction(writing: true) {
                try copy.execute("DELETE FROM t")
                throw Abandon()
            }
        }
        #expect(try copy.integer("SELECT count(*) FROM t") == 2_002)
    }

    @Test func anEmptyImageIsRefused() throws {
        #expect(throws: StorageError(extendedCode: 21, message: "an empty database image")) {
            try Connection(image: [])
        }
    }

    @Test func bytesThatAreNoDatabaseFailAtTheFirstRead() throws {
        let copy = try Connection(image: Array(repeating: 0x42, count: 4_096))
        let error = try #require(throws: StorageError.self) { try copy.integer("SELECT count(*) FROM sqlite_master") }
        #expect(error.isCorruptOrForeign)
        #expect(error.code == 26)
    }
}
