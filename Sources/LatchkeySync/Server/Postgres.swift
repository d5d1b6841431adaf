internal import CPostgres
package import FoundationEssentials
package import LatchkeyEngine
package import LatchkeyPOSIX

/// A value sent to or read from PostgreSQL. Parameters travel in binary for `bytes` and as text otherwise;
/// results are read in binary (`int8`, `int4`, `bool`, `bytea`, `text`).
package enum PostgresValue: Hashable, Sendable {
    case integer(Int64)
    case bool(Bool)
    case bytes(Data)
    case text(String)
    case null

    package var integer: Int64? { if case .integer(let value) = self { value } else { nil } }
    package var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    package var bytes: Data? { if case .bytes(let value) = self { value } else { nil } }
    package var text: String? { if case .text(let value) = self { value } else { nil } }
}

/// A failure PostgreSQL reported: its SQLSTATE (`"40001"`, `"LK001"`…) and message, or a lost connection.
package struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// The SQLSTATE, or nil when the connection failed or broke.
    package let state: String?
    /// libpq's or the server's message (never a parameter value: the server's messages name none of ours).
    package let message: String
    /// Whether the connection is gone (the caller reconnects).
    package var connectionLost: Bool
    /// Whether libpq could not even parse the connection string (no connection was tried).
    package var malformedConnectionString = false
    /// Whether an established connection dropped under a request — a server connection closed by the
    /// server or by a pooler (`pg_terminate_backend`, a restart, PgBouncer's idle timeouts) — rather than
    /// a connection that could not be made, or a pooler saying the server cannot be reached. Such a
    /// request may be sent again on a new connection (every sync request is safe to repeat).
    package var droppedConnection = false

    package init(state: String?, message: String, connectionLost: Bool, malformedConnectionString: Bool = false) {
        self.state = state
        self.message = message
        self.connectionLost = connectionLost
        self.malformedConnectionString = malformedConnectionString
    }

    package var description: String { state.map { "\(message) (SQLSTATE \($0))" } ?? message }

    /// As a keychain error: a connection string libpq cannot parse is errSecParam; a lost or refused
    /// connection errSecNotAvailable; anything else errSecIO — each with its sync cause.
    package var keychainError: KeychainError {
        if malformedConnectionString {
            return SyncFailure.malformedServer.error(.param, "the sync server's connection string: \(message)")
        }
        return connectionLost
            ? SyncFailure.serverUnreachable.error(.notAvailable, "the sync server: \(message)")
            : SyncFailure.serverRefused.error(.io, "the sync server: \(message)")
    }
}

/// One libpq connection: the only file that calls libpq (loaded at the first connection, see `LibPQ`). Used by one thread at a time (the sync client
/// owns its connection and is not shared), hence the unchecked `Sendable`.
package final class PostgresConnection: @unchecked Sendable {
    // @unchecked: the PGconn is used by the one thread that owns this object at a time (the sync client's).
    private let connection: OpaquePointer

    /// Connects with a libpq connection string or URI (`postgresql://…`, `host=… dbname=…`); the `PG*`
    /// environment variables fill in what it leaves out. Refuses a server older than PostgreSQL 12.
    package init(_ conninfo: String) throws(PostgresError) {
        try LibPQ.loaded.get()
        // Parsed first, so a string libpq cannot read is told apart from a server it cannot reach.
        var parseError: UnsafeMutablePointer<CChar>?
        guard let options = latchkey_PQconninfoParse(conninfo, &parseError) else {
            defer { latchkey_PQfreemem(parseError) }
            throw PostgresError(
                state: nil, message: parseError == nil ? "out of memory" : Self.trimmed(parseError),
                connectionLost: false, malformedConnectionString: parseError != nil)
        }
        latchkey_PQconninfoFree(options)
        guard let connection = latchkey_PQconnectdb(conninfo) else {
            throw PostgresError(state: nil, message: "out of memory", connectionLost: true)
        }
        // From here on deinit finishes the connection, on failure too.
        self.connection = connection
        guard latchkey_PQstatus(connection) == CONNECTION_OK else {
            throw PostgresError(
                state: nil, message: Self.trimmed(latchkey_PQerrorMessage(connection)), connectionLost: true)
        }
        guard latchkey_PQserverVersion(connection) >= 120_000 else {
            throw PostgresError(state: nil, message: "the server is older than PostgreSQL 12", connectionLost: false)
        }
        // The server's notices (NOTICE: … already exists) are not for the user's terminal.
        // The previous processor (the default) is not kept.
        _ = latchkey_PQsetNoticeProcessor(connection, { _, _ in }, nil)
    }

    deinit { latchkey_PQfinish(connection) }

    /// Whether the connection is still usable.
    package var isHealthy: Bool { latchkey_PQstatus(connection) == CONNECTION_OK }

    /// The socket, for waiting on notifications.
    package var socket: FileDescriptor { FileDescriptor(rawValue: latchkey_PQsocket(connection)) }

    /// Runs one or more statements without parameters (schema scripts, LISTEN, transactions).
    package func execute(_ sql: String) throws(PostgresError) {
        guard let result = latchkey_PQexec(connection, sql) else { throw failure(nil) }
        defer { latchkey_PQclear(result) }
        let status = latchkey_PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else { throw failure(result) }
    }

    /// Runs one statement with parameters (`$1`, `$2`…) and returns its rows, every column read in binary.
    @discardableResult
    package func query(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> [[PostgresValue]] {
        var buffers: [Data] = []
        var formats: [Int32] = []
        var isNull: [Bool] = []
        for parameter in parameters {
            switch parameter {
            case .integer(let value):
                buffers.append(Data(String(value).utf8))
                formats.append(0)
                isNull.append(false)
            case .bool(let value):
                buffers.append(Data((value ? "t" : "f").utf8))
                formats.append(0)
                isNull.append(false)
            case .text(let value):
                buffers.append(Data(value.utf8))
                formats.append(0)
                isNull.append(false)
            case .bytes(let value):
                buffers.append(value)
                formats.append(1)
                isNull.append(false)
            case .null:
                buffers.append(Data())
                formats.append(0)
                isNull.append(true)
            }
        }
        // Text parameters must be NUL-terminated; binary ones carry their length.
        let storage = buffers.enumerated().map { index, data -> UnsafeMutablePointer<CChar>? in
            if isNull[index] { return nil }
            let pointer = UnsafeMutablePointer<CChar>.allocate(capacity: data.count + 1)
            data.withUnsafeBytes { raw in
                if let base = raw.baseAddress {
                    pointer.update(from: base.assumingMemoryBound(to: CChar.self), count: data.count)
                }
            }
            pointer[data.count] = 0
            return pointer
        }
        defer { for pointer in storage { pointer?.deallocate() } }
        let lengths = buffers.map { Int32($0.count) }
        let values = storage.map { UnsafePointer($0) }
        let result = values.withUnsafeBufferPointer { valuePointers in
            lengths.withUnsafeBufferPointer { lengthPointers in
                formats.withUnsafeBufferPointer { formatPointers in
                    latchkey_PQexecParams(
                        connection, sql, Int32(parameters.count), nil, valuePointers.baseAddress,
                        lengthPointers.baseAddress, formatPointers.baseAddress, 1)
                }
            }
        }
        guard let result else { throw failure(nil) }
        defer { latchkey_PQclear(result) }
        let status = latchkey_PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else { throw failure(result) }
        let rows = latchkey_PQntuples(result)
        let columns = latchkey_PQnfields(result)
        var table: [[PostgresValue]] = []
        table.reserveCapacity(Int(rows))
        for row in 0..<rows {
            var values: [PostgresValue] = []
            values.reserveCapacity(Int(columns))
            for column in 0..<columns {
                if latchkey_PQgetisnull(result, row, column) != 0 {
                    values.append(.null)
                    continue
                }
                let length = Int(latchkey_PQgetlength(result, row, column))
                let bytes = latchkey_PQgetvalue(result, row, column).map { Data(bytes: $0, count: length) } ?? Data()
                values.append(try Self.decode(bytes, type: latchkey_PQftype(result, column)))
            }
            table.append(values)
        }
        return table
    }

    /// Runs one statement by the simple query protocol — one message each way, none of the extended
    /// protocol's parse, bind and describe steps — and returns its rows as text: for the poll a pooled
    /// device sends every few seconds, the least the server and the pooler can be asked to do. Only for
    /// SQL built from the caller's own values (hex digits, numbers), never from anything it was given.
    package func simpleQuery(_ sql: String) throws(PostgresError) -> [[String?]] {
        guard let result = latchkey_PQexec(connection, sql) else { throw failure(nil) }
        defer { latchkey_PQclear(result) }
        let status = latchkey_PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else { throw failure(result) }
        return (0..<latchkey_PQntuples(result)).map { row in
            (0..<latchkey_PQnfields(result)).map { column in
                latchkey_PQgetisnull(result, row, column) != 0
                    ? nil : latchkey_PQgetvalue(result, row, column).map { String(cString: $0) }
            }
        }
    }

    /// Runs a `COPY … TO STDOUT` and returns how many bytes it sent (the benchmark's floor: the server's
    /// fastest way to hand over rows).
    package func copyOut(_ sql: String) throws(PostgresError) -> Int {
        guard let started = latchkey_PQexec(connection, sql) else { throw failure(nil) }
        let status = latchkey_PQresultStatus(started)
        guard status == PGRES_COPY_OUT else {
            defer { latchkey_PQclear(started) }
            throw failure(started)
        }
        latchkey_PQclear(started)
        var total = 0
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let count = latchkey_PQgetCopyData(connection, &buffer, 0)
            if count > 0 {
                total += Int(count)
                latchkey_PQfreemem(buffer)
                continue
            }
            guard count == -1 else { throw failure(nil) }
            break
        }
        while let result = latchkey_PQgetResult(connection) {
            defer { latchkey_PQclear(result) }
            guard latchkey_PQresultStatus(result) == PGRES_COMMAND_OK else { throw failure(result) }
        }
        return total
    }

    /// Waits up to `milliseconds` for a notification on a channel this connection LISTENs to; returns the
    /// channels that rang (empty on timeout). A broken connection throws.
    package func notifications(waitingUpTo milliseconds: Int32) throws(PostgresError) -> [String] {
        var channels = drainNotifications()
        if !channels.isEmpty { return channels }
        guard socket.waitReadable(milliseconds: milliseconds) else { return [] }
        guard latchkey_PQconsumeInput(connection) == 1 else { throw failure(nil) }
        channels = drainNotifications()
        return channels
    }

    /// The notifications libpq has already read off the socket — with a query's results, when one came
    /// while the connection was busy — and keeps in its queue: waiting for the socket would not see them.
    /// Takes them from the queue; no I/O.
    package func queuedNotifications() -> [String] { drainNotifications() }

    private func drainNotifications() -> [String] {
        var channels: [String] = []
        while let notification = latchkey_PQnotifies(connection) {
            channels.append(String(cString: notification.pointee.relname))
            latchkey_PQfreemem(notification)
        }
        return channels
    }

    private static func decode(_ bytes: Data, type: UInt32) throws(PostgresError) -> PostgresValue {
        func integer(_ count: Int) -> Int64 {
            // Big-endian, from the raw bytes (not through `Data`'s iterator, a byte at a time).
            bytes.withUnsafeBytes { $0.prefix(count).reduce(Int64(0)) { ($0 << 8) | Int64($1) } }
        }
        switch type {
        case 20:  // int8
            guard bytes.count == 8 else { break }
            return .integer(integer(8))
        case 23:  // int4
            guard bytes.count == 4 else { break }
            return .integer(Int64(Int32(truncatingIfNeeded: integer(4))))
        case 16: return .bool(bytes.first == 1)
        case 17: return .bytes(bytes)
        case 25, 1043, 19: return .text(String(decoding: bytes, as: UTF8.self))
        default: break
        }
        throw PostgresError(state: nil, message: "unexpected column type \(type)", connectionLost: false)
    }

    private func failure(_ result: OpaquePointer?) -> PostgresError {
        var error: PostgresError
        if let result {
            let state = latchkey_PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
            let primary = latchkey_PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
            error = PostgresError(
                state: state, message: primary ?? Self.trimmed(latchkey_PQresultErrorMessage(result)),
                connectionLost: latchkey_PQstatus(connection) != CONNECTION_OK)
        } else {
            error = PostgresError(
                state: nil, message: Self.trimmed(latchkey_PQerrorMessage(connection)),
                connectionLost: latchkey_PQstatus(connection) != CONNECTION_OK)
        }
        // A connection exception or a server going down ends the session even when libpq has not noticed
        // yet (a pooler may say so and close the connection after).
        if let state = error.state, state.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(state) {
            error.connectionLost = true
        }
        error.droppedConnection = error.connectionLost && !Self.poolerCannotReachServer(error.message)
        return error
    }

    /// PgBouncer's messages for a server it cannot reach after the client waited for a server connection in
    /// vain: the server is away, and asking again only waits again. ("server login has been failing" is not
    /// one: PgBouncer says it for `server_login_retry` after one failed attempt, while the server may be
    /// back already.)
    private static func poolerCannotReachServer(_ message: String) -> Bool {
        ["query_wait_timeout", "pgbouncer cannot connect to server", "no more connections allowed"].contains {
            message.contains($0)
        }
    }

    private static func trimmed(_ message: UnsafeMutablePointer<CChar>?) -> String {
        guard let message else { return "unknown error" }
        return String(cString: message).trimmingWhitespace()
    }
}

/// libpq, loaded from `libpq.so.5` at the first connection rather than linked: only sync needs it, and a
/// linked libpq (with the Kerberos, LDAP and TLS libraries it needs) cost every `latchkey` command and every
/// process linking `LatchkeySync` about 6 ms at start. The calls are CPostgres's generated `latchkey_PQ…`
/// wrappers (tools/generate-loaders), as every C library's are.
private enum LibPQ {
    /// Checked once per process; a failure is every connection's error (the library is not installed).
    static let loaded: Result<Void, PostgresError> = {
        guard let reason = latchkey_cpostgres_unavailable() else { return .success(()) }
        return .failure(
            PostgresError(
                state: nil, message: "sync needs libpq, which cannot be loaded: \(String(cString: reason))",
                connectionLost: true))
    }()
}
