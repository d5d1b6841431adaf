import Foundation
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

/// Another process's lock on the file is waited out, not reported: two pools on one file stand for two
/// processes.
@Suite(.dedicatedThreads) struct BusyRetryTests {
    func temporaryFile() -> String {
        let path = NSTemporaryDirectory() + "/latchkey-storage-\(UUID().uuidString).db"
        #expect(FileManager.default.createFile(atPath: path, contents: Data()))
        return path
    }

    func pool(_ path: String, busyDeadline: Duration = .seconds(60)) throws -> DatabasePool {
        DatabasePool(writer: try Connection(path: path, mode: .readWrite), busyDeadline: busyDeadline, makeReader: nil)
    }

    func removeFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: path + suffix)  // a file the test never made is fine
        }
    }

    @Test func aWriterWaitsForAnotherConnectionsLockInsteadOfFailing() async throws {
        let path = temporaryFile()
        defer { removeFiles(path) }
        let setup = try Connection(path: path, mode: .readWrite)
        try setup.execute("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER)")
        let holder = try pool(path)
        let waiter = try pool(path)

        // The holder keeps the write lock for 3 s, longer than SQLite's own 2 s busy timeout, so the waiter
        // must go through BusyRetry's loop.
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

    @Test func aLockThatOutlastsTheDeadlineIsReportedWithHowLongItWaited() async throws {
        let path = temporaryFile()
        defer { removeFiles(path) }
        let setup = try Connection(path: path, mode: .readWrite)
        try setup.execute("PRAGMA journal_mode = WAL; CREATE TABLE t (n INTEGER)")
        let holder = try pool(path)
        let waiter = try pool(path, busyDeadline: .milliseconds(100))

        // The holder keeps its lock until the waiter has given up, however long that takes.
        let started = DispatchSemaphore(value: 0)
        let gaveUp = DispatchSemaphore(value: 0)
        let holding = Task.detached {
            try holder.write { db in
                try db.run("INSERT INTO t VALUES (1)")
                started.signal()
                gaveUp.wait()
            }
        }
        started.wait()
        let error = #expect(throws: StorageError.self) {
            try waiter.write { db in try db.run("INSERT INTO t VALUES (2)") }
        }
        gaveUp.signal()
        try await holding.value
        #expect(error?.isBusy == true)
        #expect(error?.message == "the keychain file stayed locked by another process for 0.1 seconds")
        // Nothing of the refused write was kept; the holder's row was.
        #expect(try waiter.read { try $0.integer("SELECT count(*) FROM t") } == 1)
    }
}
