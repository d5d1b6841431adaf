import Dispatch
import LatchkeyPOSIX

/// One writer and several readers on one database file in WAL mode, after GRDB's `DatabasePool`: reads run
/// on reader connections of their own, each in a snapshot, while a write — however long — runs on the
/// writer; so a long transaction (an import, a sync pull) never stalls lookups. Writes are serialized. A
/// lock held by another process is waited for by retrying the whole transaction, sleeping between attempts
/// with no lock of this pool held. An in-memory database has no readers: everything runs on the writer.
package final class DatabasePool: @unchecked Sendable {
    // @unchecked: the writer connection is used only while `writerLock` is held; each reader connection is
    // owned by one caller at a time (taken out of `idle` and put back under `readersLock`), so no connection
    // is ever shared.
    private let writer: Connection
    private let writerLock = ThreadLock()
    private let makeReader: (@Sendable () throws -> Connection)?
    private let maximumReaders: Int
    private let readersLock = ThreadLock()
    private var idle: [Connection] = []
    private var open = 0
    private let available: DispatchSemaphore
    /// How long a transaction keeps retrying while another process holds the lock.
    package let busyDeadline: Duration

    /// A pool around `writer`. `makeReader` opens one more connection to the same file, configured for
    /// reading (nil for an in-memory database); at most `maximumReaders` are open at once, opened as needed.
    package init(
        writer: sending Connection, maximumReaders: Int = 4, busyDeadline: Duration = .seconds(60),
        makeReader: (@Sendable () throws -> Connection)?
    ) {
        writer.setBusyTimeout(milliseconds: 2_000)
        self.writer = writer
        self.makeReader = makeReader
        self.maximumReaders = makeReader == nil ? 0 : max(1, maximumReaders)
        self.available = DispatchSemaphore(value: self.maximumReaders)
        self.busyDeadline = busyDeadline
    }

    /// Runs `body` in a read transaction (a consistent snapshot) on a reader connection.
    package func read<T>(_ body: (Connection) throws -> T) throws -> T {
        guard makeReader != nil else {
            return try BusyRetry.run(deadline: busyDeadline) {
                try writerLock.withLock { try writer.transaction(writing: false) { try body(writer) } }
            }
        }
        return try BusyRetry.run(deadline: busyDeadline) {
            let reader = try takeReader()
            defer { putBack(reader) }
            return try reader.transaction(writing: false) { try body(reader) }
        }
    }

    /// Runs `body` — which must run one statement only — on a reader connection without BEGIN and COMMIT:
    /// a single SELECT stepped to its end is its own read transaction, on one snapshot, so the two extra
    /// statements of `read` buy nothing there (they are a tenth of a one-item lookup).
    package func readOneStatement<T>(_ body: (Connection) throws -> T) throws -> T {
        guard makeReader != nil else {
            return try BusyRetry.run(deadline: busyDeadline) { try writerLock.withLock { try body(writer) } }
        }
        return try BusyRetry.run(deadline: busyDeadline) {
            let reader = try takeReader()
            defer { putBack(reader) }
            return try body(reader)
        }
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`) on the writer; all of it commits or none of
    /// it does. When another process holds the write lock the whole transaction is retried, so `body` must
    /// only touch the database (it may run more than once).
    package func write<T>(_ body: (Connection) throws -> T) throws -> T {
        try BusyRetry.run(deadline: busyDeadline) {
            try writerLock.withLock { try writer.transaction(writing: true) { try body(writer) } }
        }
    }

    /// How many WAL frames (pages) a commit made by `bulkWrite` leaves before it checkpoints: 16,384 pages
    /// of 4 KiB, 64 MiB. Every other commit checkpoints at SQLite's default, 1,000.
    package static let bulkCheckpointFrames = 16_384
    /// SQLite's default auto-checkpoint threshold, which the writer keeps outside `bulkWrite`.
    package static let checkpointFrames = 1_000

    /// As `write`, for a transaction of thousands of rows (a batch add, a page of sync) that more are likely
    /// to follow: its commit checkpoints the WAL only once it holds `bulkCheckpointFrames`, not 1,000. The
    /// pages that keys in random order (ids, digests) rewrite in every transaction are then copied into the
    /// file once per few transactions instead of after each, and the transaction is as durable as any (the
    /// WAL is synced at every commit; a checkpoint only moves committed pages into the main file). The next
    /// ordinary commit, a `checkpoint()` or the last connection's close moves the rest.
    package func bulkWrite<T>(_ body: (Connection) throws -> T) throws -> T {
        try BusyRetry.run(deadline: busyDeadline) {
            try writerLock.withLock {
                try writer.execute("PRAGMA wal_autocheckpoint = \(Self.bulkCheckpointFrames)")
                defer {
                    // Setting the threshold only stores a number in the connection: it cannot fail on an open one.
                    try? writer.execute("PRAGMA wal_autocheckpoint = \(Self.checkpointFrames)")
                }
                return try writer.transaction(writing: true) { try body(writer) }
            }
        }
    }

    /// Copies what the WAL holds into the main file as far as readers allow (`PRAGMA wal_checkpoint(PASSIVE)`,
    /// which waits for no one): after a run of `bulkWrite`s, so the next small write does not pay for them.
    package func checkpoint() throws {
        try withWriter { db in _ = try db.integer("PRAGMA wal_checkpoint(PASSIVE)") }
    }

    /// Runs `body` with the writer outside any transaction (pragmas, checkpoints).
    package func withWriter<T>(_ body: (Connection) throws -> T) throws -> T {
        try BusyRetry.run(deadline: busyDeadline) { try writerLock.withLock { try body(writer) } }
    }

    /// How many reader connections are open now (for tests).
    package var openReaders: Int { readersLock.withLock { open } }

    private func takeReader() throws -> Connection {
        available.wait()
        let reused = readersLock.withLock { () -> Connection? in
            if let connection = idle.popLast() { return connection }
            open += 1
            return nil
        }
        if let reused { return reused }
        do {
            let connection = try makeReader!()
            connection.setBusyTimeout(milliseconds: 2_000)
            return connection
        } catch {
            readersLock.withLock { open -= 1 }
            available.signal()
            throw error
        }
    }

    private func putBack(_ connection: Connection) {
        readersLock.withLock { idle.append(connection) }
        available.signal()
    }
}
