import Foundation
import LatchkeyStorage
import Testing

/// What SQLite's failures say: SQLite's own message, never a value bound to the statement.
@Suite struct StorageErrorTests {
    @Test func errorsNameSQLiteButNeverBoundValues() throws {
        let db = try Connection(path: ":memory:", mode: .memory)
        try db.execute("CREATE TABLE t (v TEXT UNIQUE)")
        try db.run("INSERT INTO t VALUES (?)", [.text("secret-value")])
        let error = #expect(throws: StorageError.self) {
            try db.run("INSERT INTO t VALUES (?)", [.text("secret-value")])
        }
        #expect(error?.isConstraintViolation == true)
        #expect(error?.description.contains("secret-value") == false)
    }
}
