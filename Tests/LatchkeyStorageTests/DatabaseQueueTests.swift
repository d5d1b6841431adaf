import Foundation
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

@Suite(.dedicatedThreads) struct DatabaseQueueTests {
    func temporaryFile() -> String {
        let path = NSTemporaryDirectory() + "/latchkey-storage-\(UUID().uuidString).db"
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        return path
    }

    @Test func aWriterWaitsForAnotherConnectionsLockInsteadOfFailing() async throws {
        let path = temporaryFile()
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let setup = try Connection(path: path, mode: .readWrite)
        try setup.execute("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER)")
        let holder = DatabaseQueue(connection: try Connection(path: path, mode: .readWrite))
        let waiter = DatabaseQueue(connection: try Connection(path: path, mode: .readWrite))

        // The holder keeps the write lock for 3 s, longer than SQLite's own 2 s busy timeout, so the waiter
        // must go through the queue's retry loop.
        let started = DispatchSemaphore(value: 0)
        let holding = Task.detached {
            try holder.write { db in
                try db.run("INSERT INTO t VALUES (1)")
                started.signal()
                Thread.sleep(forTimeInterval: 3)
            }
        }
        started.wait()
        try waiter.write { db in try db.run("INSERT INTO t VALUES (2)") }
        try await holding.value
        #expect(try waiter.read { try $0.integer("SELECT count(*) FROM t") } == 2)
    }

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
