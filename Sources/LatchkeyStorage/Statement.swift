package import FoundationEssentials

/// A prepared statement, owned and cached by its `Connection`. Not thread-safe: it is only reachable
/// through its connection, which `DatabasePool` hands to one caller at a time.
package final class Statement {
    let handle: SQLite.Statement
    private unowned let connection: Connection
    /// The SQL text (with `?` placeholders; never values).
    package let sql: String

    init(handle: SQLite.Statement, connection: Connection, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit { SQLite.finalize(handle) }

    /// Binds `values` to the parameters `?1...?n`, replacing earlier bindings.
    package func bind(_ values: [SQLValue]) throws(StorageError) {
        SQLite.reset(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .null: code = SQLite.bindNull(handle, index)
            case .integer(let number): code = SQLite.bindInteger(handle, index, number)
            case .text(let text): code = SQLite.bindText(handle, index, text)
            case .blob(let data): code = SQLite.bindBlob(handle, index, data)
            }
            if code != SQLite.ok { throw connection.error(code) }
        }
    }

    /// Steps once: true when a row is available, false when the statement is done.
    package func step() throws(StorageError) -> Bool {
        let code = SQLite.step(handle)
        if code == SQLite.row { return true }
        if code == SQLite.done { return false }
        let error = connection.error(code)
        SQLite.reset(handle)
        throw error
    }

    /// Resets the statement so its locks are released and it can run again.
    package func reset() { SQLite.reset(handle) }

    /// Whether column `index` is NULL in the current row.
    package func isNull(_ index: Int32) -> Bool { SQLite.columnType(handle, index) == SQLite.typeNull }
    /// Column `index` of the current row as an integer (0 for NULL).
    package func integer(_ index: Int32) -> Int64 { SQLite.columnInteger(handle, index) }
    /// Column `index` of the current row as text, nil for NULL.
    package func text(_ index: Int32) -> String? { SQLite.columnText(handle, index) }
    /// Column `index` of the current row as a blob, nil for NULL.
    package func blob(_ index: Int32) -> Data? { SQLite.columnBlob(handle, index) }
    /// Columns `indexes` of the current row as blobs (nil for NULL), in that order, copied into one buffer
    /// that they share: one allocation for a row's blobs instead of one or two apiece. Each is a slice of
    /// the buffer (its `startIndex` is not 0; index it through `startIndex` or its bytes).
    package func blobs(_ indexes: [Int32]) -> [Data?] { SQLite.columnBlobs(handle, indexes) }
}
