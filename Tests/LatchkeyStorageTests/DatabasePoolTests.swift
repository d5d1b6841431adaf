import Foundation
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

@Suite(.dedicatedThreads) struct DatabasePoolTests {
    func temporaryFile() -> String {
        let path = NSTemporaryDirectory() + "/latchkey-pool-\(UUID().uuidString).db"
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        return path
    }

    func pool(_ path: String) throws -> DatabasePool {
        let writer = try Connection(path: path, mode: .readWrite)
        try writer.execute("PRAGMA journal_mode = WAL")
        return DatabasePool(writer: writer, maximumReaders: 2) {
            let reader = try Connection(path: path, mode: .readWrite)
            try reader.execute("PRAGMA query_only = ON")
            return reader
        }
    }

    @Test func readsProceedWhileAWriteTransactionIsOpen() throws {
        let path = temporaryFile()
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let pool = try pool(path)
        try pool.write {
            try $0.execute("CREATE TABLE t (n INTEGER)")
            try $0.run("INSERT INTO t VALUES (1)")
        }
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let writer = Thread {
            // Best effort in a test thread: a failure shows up as a wrong count below.
            _ = try? pool.write { db in
                try db.run("INSERT INTO t VALUES (2)")
                inside.signal()
                release.wait()
            }
            finished.signal()
        }
        writer.start()
        inside.wait()
        // The write is open and uncommitted: readers see the committed snapshot, at once.
        #expect(try pool.read { try $0.integer("SELECT count(*) FROM t") } == 1)
        #expect(try pool.read { try $0.integer("SELECT count(*) FROM t") } == 1)
        release.signal()
        #expect(finished.wait(timeout: .now() + 30) == .success)
        #expect(try pool.read { try $0.integer("SELECT count(*) FROM t") } == 2)
        #expect(pool.openReaders == 1, "readers are reused")
    }

    @Test func readersAreBoundedAndShared() throws {
        let path = temporaryFile()
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let pool = try pool(path)
        try pool.write { try $0.execute("CREATE TABLE t (n INTEGER)") }
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            for _ in 0..<50 { _ = try? pool.read { try $0.integer("SELECT count(*) FROM t") } }  // Counted below.
        }
        #expect(pool.openReaders <= 2)
        #expect(try pool.read { try $0.integer("SELECT count(*) FROM t") } == 0)
    }

    @Test func readersCannotWrite() throws {
        let path = temporaryFile()
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let pool = try pool(path)
        try pool.write { try $0.execute("CREATE TABLE t (n INTEGER)") }
        #expect(throws: StorageError.self) { try pool.read { try $0.run("INSERT INTO t VALUES (1)") } }
    }
}
