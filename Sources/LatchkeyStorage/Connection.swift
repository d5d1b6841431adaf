package import FoundationEssentials

/// One SQLite connection. Not `Sendable`: reach it only through `DatabasePool`'s `read`, `write` and
/// `withWriter`, which give each connection to one caller at a time.
package final class Connection {
    /// How to open the file.
    package enum OpenMode: Sendable {
        /// An existing file, read and write; fails when the file is missing.
        case readWrite
        /// An existing file, read only.
        case readOnly
        /// A private in-memory database (no file at all).
        case memory
    }

    private let handle: SQLite.Database
    private var cache: [String: Statement] = [:]
    /// The statement `statement(_:)` returned last.
    private var recent: Statement?
    /// The path the connection was opened with (":memory:" for memory databases).
    package let path: String

    /// Opens `path` in `mode`. Never creates a file: callers create it themselves with the right mode
    /// before SQLite sees it.
    package init(path: String, mode: OpenMode) throws(StorageError) {
        let flags: Int32
        let target: String
        switch mode {
        case .readWrite:
            flags = SQLite.openFlags(readOnly: false, create: false, memory: false)
            target = path
        case .readOnly:
            flags = SQLite.openFlags(readOnly: true, create: false, memory: false)
            target = path
        case .memory:
            flags = SQLite.openFlags(readOnly: false, create: true, memory: true)
            target = ":memory:"
        }
        switch SQLite.open(path: target, flags: flags) {
        case .success(let handle): self.handle = handle
        case .failure(let failure): throw failure
        }
        self.path = target
        // Statements are never built from input, but refuse writes to sqlite_master and the like anyway.
        _ = SQLite.enableDefensiveMode(handle)  // Best effort: an older SQLite without the option still works.
    }

    /// A private in-memory database that starts as a copy of `image` (pages `image()` made).
    package convenience init(image: [UInt8]) throws(StorageError) {
        try self.init(path: ":memory:", mode: .memory)
        guard !image.isEmpty else {
            throw StorageError(extendedCode: SQLite.Code.misuse, message: "an empty database image")
        }
        let code = SQLite.deserialize(handle, image)
        if code != SQLite.ok { throw error(code) }
    }

    /// A copy of the main database's pages, for `init(image:)`.
    package func image() throws(StorageError) -> [UInt8] {
        guard let pages = SQLite.serialize(handle) else {
            throw StorageError(extendedCode: SQLite.Code.noMemory, message: "SQLite could not copy the database")
        }
        return pages
    }

    deinit {
        recent = nil
        cache.removeAll()  // Finalize statements before closing.
        SQLite.close(handle)
    }

    /// The SQLite library version (for `doctor` and benchmark reports).
    package static var libraryVersion: String { SQLite.libraryVersion }

    func error(_ code: Int32) -> StorageError {
        let extended = SQLite.extendedErrorCode(handle)
        // The connection's extended code belongs to this failure when its primary code matches.
        let chosen = (extended & 0xFF) == (code & 0xFF) ? extended : code
        let message = SQLite.errorMessage(handle)
        return StorageError(extendedCode: chosen, message: message.isEmpty ? SQLite.describe(code) : message)
    }

    /// Sets how long SQLite itself waits for another connection's lock before reporting busy.
    package func setBusyTimeout(milliseconds: Int32) { SQLite.setBusyTimeout(handle, milliseconds: milliseconds) }

    /// Runs one or more statements that take no parameters and return no rows.
    package func execute(_ sql: String) throws(StorageError) {
        let code = SQLite.exec(handle, sql)
        if code != SQLite.ok { throw error(code) }
    }

    /// The cached prepared statement for `sql`. Every use binds it first (`Statement.bind` resets it and
    /// clears its bindings) and resets it after, so a cached one is not reset again here.
    package func statement(_ sql: String) throws(StorageError) -> Statement {
        // The statement used last, compared first: a loop runs one text again and again, and comparing two
        // copies of one string is cheaper than hashing a query's few hundred bytes.
        if let recent, recent.sql == sql { return recent }
        if let cached = cache[sql] {
            recent = cached
            return cached
        }
        let (prepared, code) = SQLite.prepare(handle, sql)
        guard code == SQLite.ok, let prepared else { throw error(code) }
        let statement = Statement(handle: prepared, connection: self, sql: sql)
        cache[sql] = statement
        recent = statement
        return statement
    }

    /// Runs `sql` with `arguments` to completion (INSERT, UPDATE, DELETE, DDL).
    package func run(_ sql: String, _ arguments: [SQLValue] = []) throws(StorageError) {
        let statement = try self.statement(sql)
        try statement.bind(arguments)
        while try statement.step() {}
        statement.reset()
    }

    /// Runs a query and calls `body` for each row; the statement is reset afterwards, even on error.
    package func forEachRow(
        _ sql: String, _ arguments: [SQLValue] = [], _ body: (Statement) throws -> Void
    ) throws {
        let statement = try self.statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        while try statement.step() { try body(statement) }
    }

    /// The first column of the first row as an integer, or nil when there is no row or it is NULL.
    package func integer(_ sql: String, _ arguments: [SQLValue] = []) throws(StorageError) -> Int64? {
        let statement = try self.statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        guard try statement.step(), !statement.isNull(0) else { return nil }
        return statement.integer(0)
    }

    /// The first column of the first row as a blob, or nil when there is no row or it is NULL.
    package func blob(_ sql: String, _ arguments: [SQLValue] = []) throws(StorageError) -> Data? {
        let statement = try self.statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        guard try statement.step() else { return nil }
        return statement.blob(0)
    }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE.
    package var changes: Int { Int(SQLite.changes(handle)) }
    /// The rowid of the most recent successful INSERT.
    package var lastInsertedRowID: Int64 { SQLite.lastInsertRowID(handle) }
    /// Whether a transaction is open.
    package var isInTransaction: Bool { !SQLite.isAutocommit(handle) }

    /// Runs `body` in a transaction: `BEGIN IMMEDIATE` (takes the write lock up front, so a reader can never
    /// fail to upgrade) or `BEGIN DEFERRED` for reads; commits when `body` returns, rolls back when it throws.
    package func transaction<T>(writing: Bool, _ body: () throws -> T) throws -> T {
        // Prepared once and reused: sqlite3_exec would parse the statement on every transaction.
        try run(writing ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
        let result: T
        do {
            result = try body()
        } catch {
            rollbackIfNeeded()
            throw error
        }
        do {
            try run("COMMIT")
        } catch {
            rollbackIfNeeded()
            throw error
        }
        return result
    }

    /// Rolls back an open transaction. A failing ROLLBACK leaves nothing to do: SQLite has then already
    /// rolled back (it does so automatically after I/O and full-disk errors).
    package func rollbackIfNeeded() {
        guard isInTransaction else { return }
        _ = SQLite.exec(handle, "ROLLBACK")  // See above: failure means the transaction is already gone.
    }
}
