import Foundation
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

/// A connection keeps its prepared statements (and checks the one it used last first): each use starts from
/// the beginning with only its own bindings, whatever the previous use of the same text did.
@Suite(.dedicatedThreads) struct StatementCacheTests {
    func database() throws -> Connection {
        let db = try Connection(path: ":memory:", mode: .memory)
        try db.execute(
            "CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT); INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')")
        return db
    }

    func values(_ db: Connection, _ sql: String, _ arguments: [SQLValue] = []) throws -> [String] {
        var found: [String] = []
        try db.forEachRow(sql, arguments) { found.append($0.text(0) ?? "NULL") }
        return found
    }

    @Test func textsUsedInTurnEachRunTheirOwnStatement() throws {
        let db = try database()
        for round in 0..<50 {
            let key = Int64(round % 3 + 1)
            #expect(
                try values(db, "SELECT v FROM t WHERE k = ?", [.integer(key)]) == [
                    ["one", "two", "three"][Int(key) - 1]
                ])
            #expect(try values(db, "SELECT v FROM t ORDER BY k DESC") == ["three", "two", "one"])
            #expect(try db.integer("SELECT count(*) FROM t WHERE k >= ?", [.integer(key)]) == 4 - key)
        }
    }

    @Test func aStatementLeftMidwayStartsOverNextTime() throws {
        let db = try database()
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try db.forEachRow("SELECT v FROM t ORDER BY k") { _ in throw Stop() }
        }
        #expect(try values(db, "SELECT v FROM t ORDER BY k") == ["one", "two", "three"])
    }

    @Test func aStatementThatFailedRunsAgain() throws {
        let db = try database()
        let insert = "INSERT INTO t (k, v) VALUES (?, ?)"
        let failure = try #require(throws: StorageError.self) { try db.run(insert, [.integer(1), .text("again")]) }
        #expect(failure.isConstraintViolation)
        try db.run(insert, [.integer(4), .text("four")])
        #expect(try values(db, "SELECT v FROM t WHERE k = ?", [.integer(4)]) == ["four"])
    }

    @Test func noBindingOutlivesItsUse() throws {
        let db = try database()
        let select = "SELECT coalesce(?, 'unbound') || '/' || coalesce(?, 'unbound')"
        #expect(try values(db, select, [.text("a"), .text("b")]) == ["a/b"])
        #expect(try values(db, select, [.text("c")]) == ["c/unbound"])
        #expect(try values(db, select) == ["unbound/unbound"])
    }
}
