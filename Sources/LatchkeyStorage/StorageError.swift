/// A failed SQLite call: the result code, and SQLite's message. Bound values never appear in it (Latchkey
/// binds every value as a parameter, and the message is SQLite's own), so it is safe to log.
package struct StorageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The extended result code (for instance 778, `SQLITE_IOERR_WRITE`).
    package let extendedCode: Int32
    /// SQLite's message for the failure.
    package let message: String

    /// Creates an error from a result code and message.
    package init(extendedCode: Int32, message: String) {
        self.extendedCode = extendedCode
        self.message = message
    }

    /// The primary result code (the low byte of the extended code).
    package var code: Int32 { extendedCode & 0xFF }

    /// `SQLITE_BUSY` or `SQLITE_LOCKED`: another connection holds a lock (retried before it reaches a caller).
    package var isBusy: Bool { code == SQLite.Code.busy || code == SQLite.Code.locked }
    /// `SQLITE_CORRUPT` or `SQLITE_NOTADB`: the file is damaged or is not an SQLite database.
    package var isCorruptOrForeign: Bool { code == SQLite.Code.corrupt || code == SQLite.Code.notADatabase }
    /// `SQLITE_FULL`: the disk (or a size limit) is full.
    package var isDiskFull: Bool { code == SQLite.Code.full }
    /// `SQLITE_IOERR`: the operating system reported an I/O error.
    package var isIOError: Bool { code == SQLite.Code.ioError }
    /// `SQLITE_CANTOPEN`: the file could not be opened.
    package var isCantOpen: Bool { code == SQLite.Code.cantOpen }
    /// `SQLITE_CONSTRAINT`: a UNIQUE constraint (or another) was violated.
    package var isConstraintViolation: Bool { code == SQLite.Code.constraint }
    /// `SQLITE_READONLY` or `SQLITE_PERM`: the file cannot be written.
    package var isReadOnly: Bool { code == SQLite.Code.readOnly || code == SQLite.Code.perm }
    /// `SQLITE_NOMEM`.
    package var isOutOfMemory: Bool { code == SQLite.Code.noMemory }
    /// `SQLITE_ERROR`, SQLite's generic code: a bad statement, or a file whose header or schema it cannot
    /// read ("unsupported file format", "malformed database schema").
    package var isGeneric: Bool { code == SQLite.Code.error }
    /// `SQLITE_TOOBIG`.
    package var isTooBig: Bool { code == SQLite.Code.tooBig }

    package var description: String { "SQLite error \(extendedCode): \(message)" }
}
