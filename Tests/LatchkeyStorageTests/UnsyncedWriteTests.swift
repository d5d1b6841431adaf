import Foundation
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

/// `DatabasePool.writeWithoutSync` (the access log's entries of reads): that one commit runs at
/// `synchronous = NORMAL` — committed to the WAL, visible to every connection — and the writer is back at
/// `FULL` after it, also when the transaction fails.
@Suite struct UnsyncedWriteTests {
    @Test func oneCommitUnsyncedThenFullAgain() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("pool.db")
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        let writer = try Connection(path: path, mode: .readWrite)
        try writer.execute("PRAGMA journal_mode = WAL")
        try writer.execute("PRAGMA synchronous = FULL")
        let pool = DatabasePool(writer: writer, maximumReaders: 1) { try Connection(path: path, mode: .readWrite) }
        try pool.write { try $0.execute("CREATE TABLE t (n INTEGER)") }

        let level = try pool.writeWithoutSync { db in
            try db.run("INSERT INTO t VALUES (1)")
            return try db.integer("PRAGMA synchronous")
        }
        #expect(level == 1)
        #expect(try pool.withWriter { try $0.integer("PRAGMA synchronous") } == 2)
        let other = try Connection(path: path, mode: .readWrite)
        #expect(try other.integer("SELECT count(*) FROM t") == 1)

        struct Failed: Error {}
        #expect(throws: Failed.self) {
            try pool.writeWithoutSync { db in
                try db.run("INSERT INTO t VALUES (2)")
                throw Failed()
            }
        }
        #expect(try pool.withWriter { try $0.integer("PRAGMA synchronous") } == 2)
        #expect(try other.integer("SELECT count(*) FROM t") == 1)
    }
}
