internal import CSQLite
import FoundationEssentials

/// Every raw SQLite call of Latchkey lives in this file; the rest of the module calls these wrappers.
enum SQLite {
    typealias Database = OpaquePointer
    typealias Statement = OpaquePointer

    static let ok = SQLITE_OK
    static let row = SQLITE_ROW
    static let done = SQLITE_DONE

    static let typeNull = SQLITE_NULL
    static let typeInteger = SQLITE_INTEGER
    static let typeBlob = SQLITE_BLOB
    static let typeText = SQLITE_TEXT

    static func openFlags(readOnly: Bool, create: Bool, memory: Bool) -> Int32 {
        var flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX
        if create { flags |= SQLITE_OPEN_CREATE }
        if memory { flags |= SQLITE_OPEN_MEMORY }
        // Never follow a symbolic link to the database file (SQLite 3.31+).
        flags |= SQLITE_OPEN_NOFOLLOW
        // Report extended result codes (SQLITE_IOERR_WRITE, SQLITE_BUSY_SNAPSHOT, ...).
        flags |= SQLITE_OPEN_EXRESCODE
        return flags
    }

    /// `sqlite3_open_v2`. On failure the handle (if any) is closed and the message returned.
    static func open(path: String, flags: Int32) -> Result<Database, StorageError> {
        var handle: OpaquePointer?
        let code = latchkey_sqlite3_open_v2(path, &handle, flags, nil)
        if code == SQLITE_OK, let handle { return .success(handle) }
        let extended = handle.map { latchkey_sqlite3_extended_errcode($0) } ?? code
        let message =
            handle.map { String(cString: latchkey_sqlite3_errmsg($0)) }
            ?? String(cString: latchkey_sqlite3_errstr(code))
        latchkey_sqlite3_close_v2(handle)
        return .failure(StorageError(extendedCode: extended, message: message))
    }

    /// `sqlite3_close_v2`: closes now, or as soon as the last statement is finalized.
    static func close(_ db: Database) { latchkey_sqlite3_close_v2(db) }

    /// `sqlite3_errmsg`: the message of the most recent failure on this connection.
    static func errorMessage(_ db: Database) -> String { String(cString: latchkey_sqlite3_errmsg(db)) }

    /// `sqlite3_extended_errcode`.
    static func extendedErrorCode(_ db: Database) -> Int32 { latchkey_sqlite3_extended_errcode(db) }

    /// `sqlite3_errstr`: the English text of a result code.
    static func describe(_ code: Int32) -> String { String(cString: latchkey_sqlite3_errstr(code)) }

    /// `sqlite3_busy_timeout`.
    static func setBusyTimeout(_ db: Database, milliseconds: Int32) { latchkey_sqlite3_busy_timeout(db, milliseconds) }

    /// `sqlite3_db_config(SQLITE_DBCONFIG_DEFENSIVE, 1)`: refuse SQL that could corrupt the file on purpose.
    static func enableDefensiveMode(_ db: Database) -> Int32 {
        latchkey_sqlite_db_config_int(db, SQLITE_DBCONFIG_DEFENSIVE, 1)
    }

    /// `sqlite3_serialize` of the main database: a copy of its pages, or nil when SQLite cannot make one.
    static func serialize(_ db: Database) -> [UInt8]? {
        var size: sqlite3_int64 = 0
        guard let pages = latchkey_sqlite3_serialize(db, "main", &size, 0) else { return nil }
        defer { latchkey_sqlite3_free(pages) }
        return Array(UnsafeBufferPointer(start: pages, count: Int(size)))
    }

    /// `sqlite3_deserialize`: the main database becomes an in-memory copy of `image`, which SQLite owns
    /// (and frees, on failure too) and may grow.
    static func deserialize(_ db: Database, _ image: [UInt8]) -> Int32 {
        guard let copy = latchkey_sqlite3_malloc64(UInt64(image.count)) else { return SQLITE_NOMEM }
        image.withUnsafeBytes { copy.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        let flags = UInt32(SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE)
        return latchkey_sqlite3_deserialize(
            db, "main", copy.assumingMemoryBound(to: UInt8.self), sqlite3_int64(image.count),
            sqlite3_int64(image.count), flags)
    }

    /// `sqlite3_exec` without a callback.
    static func exec(_ db: Database, _ sql: String) -> Int32 { latchkey_sqlite3_exec(db, sql, nil, nil, nil) }

    /// `sqlite3_prepare_v3` with `SQLITE_PREPARE_PERSISTENT` (the statement is cached and reused).
    static func prepare(_ db: Database, _ sql: String) -> (Statement?, Int32) {
        var statement: OpaquePointer?
        let code = latchkey_sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        return (statement, code)
    }

    /// `sqlite3_finalize`.
    static func finalize(_ statement: Statement) { latchkey_sqlite3_finalize(statement) }
    /// `sqlite3_step`.
    static func step(_ statement: Statement) -> Int32 { latchkey_sqlite3_step(statement) }
    /// `sqlite3_reset` then `sqlite3_clear_bindings`.
    static func reset(_ statement: Statement) {
        latchkey_sqlite3_reset(statement)
        latchkey_sqlite3_clear_bindings(statement)
    }
    /// `sqlite3_bind_parameter_count`.
    static func parameterCount(_ statement: Statement) -> Int32 { latchkey_sqlite3_bind_parameter_count(statement) }

    static func bindNull(_ statement: Statement, _ index: Int32) -> Int32 {
        latchkey_sqlite3_bind_null(statement, index)
    }
    static func bindInteger(_ statement: Statement, _ index: Int32, _ value: Int64) -> Int32 {
        latchkey_sqlite3_bind_int64(statement, index, value)
    }
    static func bindText(_ statement: Statement, _ index: Int32, _ value: String) -> Int32 {
        latchkey_sqlite3_bind_text(statement, index, value, -1, latchkey_sqlite_transient())
    }
    static func bindBlob(_ statement: Statement, _ index: Int32, _ value: Data) -> Int32 {
        value.withUnsafeBytes { bytes in
            // A zero-length blob must still be a blob, not NULL: bind with a valid pointer.
            if bytes.count == 0 { return latchkey_sqlite3_bind_zeroblob(statement, index, 0) }
            return latchkey_sqlite3_bind_blob64(
                statement, index, bytes.baseAddress, sqlite3_uint64(bytes.count), latchkey_sqlite_transient())
        }
    }

    static func columnType(_ statement: Statement, _ index: Int32) -> Int32 {
        latchkey_sqlite3_column_type(statement, index)
    }
    static func columnInteger(_ statement: Statement, _ index: Int32) -> Int64 {
        latchkey_sqlite3_column_int64(statement, index)
    }
    static func columnText(_ statement: Statement, _ index: Int32) -> String? {
        guard let text = latchkey_sqlite3_column_text(statement, index) else { return nil }
        return String(cString: text)
    }
    static func columnBlob(_ statement: Statement, _ index: Int32) -> Data? {
        if latchkey_sqlite3_column_type(statement, index) == SQLITE_NULL { return nil }
        let count = Int(latchkey_sqlite3_column_bytes(statement, index))
        guard count > 0, let bytes = latchkey_sqlite3_column_blob(statement, index) else { return Data() }
        return Data(bytes: bytes, count: count)
    }

    /// `sqlite3_column_blob` of several columns, copied into one buffer the returned slices share.
    static func columnBlobs(_ statement: Statement, _ indexes: [Int32]) -> [Data?] {
        var total = 0
        let sizes = indexes.map { index -> Int in
            guard latchkey_sqlite3_column_type(statement, index) != SQLITE_NULL else { return -1 }
            let count = Int(latchkey_sqlite3_column_bytes(statement, index))
            total += count
            return count
        }
        var buffer = Data(count: total)
        buffer.withUnsafeMutableBytes { out in
            var offset = 0
            for (index, size) in zip(indexes, sizes) where size > 0 {
                // Nil only when SQLite ran out of memory: the column stays zeros, which fail authentication.
                if let bytes = latchkey_sqlite3_column_blob(statement, index) {
                    (out.baseAddress! + offset).copyMemory(from: bytes, byteCount: size)
                }
                offset += size
            }
        }
        var offset = buffer.startIndex
        return sizes.map { size in
            guard size >= 0 else { return nil }
            defer { offset += size }
            return size == 0 ? Data() : buffer[offset..<(offset + size)]
        }
    }

    /// `sqlite3_changes64`.
    static func changes(_ db: Database) -> Int64 { latchkey_sqlite3_changes64(db) }
    /// `sqlite3_last_insert_rowid`.
    static func lastInsertRowID(_ db: Database) -> Int64 { latchkey_sqlite3_last_insert_rowid(db) }
    /// `sqlite3_get_autocommit`: whether no transaction is open.
    static func isAutocommit(_ db: Database) -> Bool { latchkey_sqlite3_get_autocommit(db) != 0 }
    /// `sqlite3_libversion`.
    static var libraryVersion: String { String(cString: latchkey_sqlite3_libversion()) }

    /// Primary result codes the storage layer distinguishes.
    enum Code {
        static let error = SQLITE_ERROR
        static let perm = SQLITE_PERM
        static let busy = SQLITE_BUSY
        static let locked = SQLITE_LOCKED
        static let noMemory = SQLITE_NOMEM
        static let readOnly = SQLITE_READONLY
        static let ioError = SQLITE_IOERR
        static let corrupt = SQLITE_CORRUPT
        static let full = SQLITE_FULL
        static let cantOpen = SQLITE_CANTOPEN
        static let constraint = SQLITE_CONSTRAINT
        static let tooBig = SQLITE_TOOBIG
        static let notADatabase = SQLITE_NOTADB
        static let auth = SQLITE_AUTH
        static let misuse = SQLITE_MISUSE
    }
}
