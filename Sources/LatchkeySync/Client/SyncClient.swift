internal import FoundationEssentials
internal import LatchkeyCrypto
package import LatchkeyEngine
internal import LatchkeyPOSIX

/// Sync for one keychain: set up a vault, join one, approve devices, push and pull, resolve conflicts,
/// remove a device. Each method that talks to the server connects when it has no connection; a lost
/// connection is errSecNotAvailable and the next call reconnects. Not for concurrent use (one owner).
package final class SyncClient {
    package let keychain: KeychainDatabase
    package internal(set) var configuration: SyncConfiguration
    var server: SyncServer?
    /// The standby's connection pulls read from (`latchkey_pulls=standby`).
    var reader: SyncServer?
    /// Whether the last server call failed because its connection dropped under it (`PostgresError.droppedConnection`).
    var dropped = false

    /// How many times a request whose connection dropped is sent again on a new connection: after 0.1 s,
    /// then twice as long each time, 3.1 s in all — longer than a pooler refuses clients after it failed to
    /// reach a server that restarted (PgBouncer's `server_login_retry`, which docs/SYNC.md says to keep at
    /// a second or two; it closes such clients without a word libpq passes on).
    static let retriesAfterDrop = 5

    /// Rows per push and per page of the inbox; a pull page (pulled and written in one transaction) is four
    /// times as many.
    package var batchSize = 1_000

    /// Hears of the rows written (`writing`: pulled and written page by page, of about as many as the server
    /// has changes after the cursor; before them, those the inbox held) — a first sync of a large vault takes
    /// a while. Rounds with nothing to pull or apply report nothing.
    package var progress: ProgressHandler?

    package init(keychain: KeychainDatabase, configuration: SyncConfiguration) {
        self.keychain = keychain
        self.configuration = configuration
    }

    /// The client of a keychain set up for sync; errSecNotAvailable when it is not.
    package static func open(_ keychain: KeychainDatabase) throws(KeychainError) -> SyncClient {
        guard let configuration = try SyncConfiguration.load(from: keychain) else {
            throw SyncFailure.notSetUp.error(
                .notAvailable, "this keychain is not set up for sync (latchkey sync setup or join)")
        }
        return SyncClient(keychain: keychain, configuration: configuration)
    }

    /// The connection, made (and the schema migrated) when there is none or it broke.
    package func connection() throws(KeychainError) -> SyncServer {
        if let server, server.connection.isHealthy { return server }
        server = nil
        let made: SyncServer
        do throws(PostgresError) {
            made = try SyncServer.connect(configuration.server)
        } catch {
            // A connection made that drops at its first statement (the migration's look) is a drop as any other.
            dropped = error.droppedConnection
            throw error.keychainError
        }
        server = made
        return made
    }

    /// The connection pulls read from: a standby's with `latchkey_pulls=standby` (made when there is none
    /// or it broke), else the writer's.
    func readConnection() throws(KeychainError) -> SyncServer {
        if let reader, reader.connection.isHealthy { return reader }
        reader = nil
        let made: SyncServer?
        do throws(PostgresError) {
            made = try SyncServer.connectReader(configuration.server)
        } catch {
            throw error.keychainError
        }
        guard let made else { return try connection() }
        reader = made
        return made
    }

    /// Drops the connections (the next call reconnects).
    package func disconnect() {
        server = nil
        reader = nil
    }

    static func connect(_ conninfo: String) throws(KeychainError) -> SyncServer {
        do throws(PostgresError) {
            return try SyncServer.connect(conninfo)
        } catch {
            throw error.keychainError
        }
    }

    /// Runs server calls, mapping PostgreSQL's errors to keychain errors (a removed device: errSecAuthFailed);
    /// a keychain error from inside passes through.
    func serverCall<T>(_ body: () throws -> T) throws(KeychainError) -> T {
        do {
            return try body()
        } catch let error as PostgresError {
            dropped = error.droppedConnection
            if error.connectionLost {
                server = nil
                reader = nil
            } else {
                // Ends a transaction the failure left open; no-op otherwise.
                _ = try? server?.connection.execute("ROLLBACK")
            }
            if error.state == "LK001" {
                throw SyncFailure.deviceRemoved.error(.authFailed, "this device was removed from the vault")
            }
            throw error.keychainError
        } catch {
            throw Self.keychainError(error)
        }
    }

    /// Runs `body` (server calls through `serverCall`), and again on a new connection — up to
    /// `retriesAfterDrop` times, after a pause that doubles — while it fails because its connection dropped under
    /// it: a server restart, `pg_terminate_backend`, a pooler closing a client or server connection, or a
    /// connection kept from an earlier round that died meanwhile (libpq learns that only when it is used).
    /// Every sync request is safe to send again: pushes are compare-and-swap, a push whose acknowledgement
    /// was lost is recognised by its author and version, and a page pulled is stored with its cursor in
    /// one transaction. A connection that cannot be made, or a pooler that cannot reach the server, fails
    /// at once (errSecNotAvailable): the server is away.
    func retryingDrops<T>(_ body: () throws(KeychainError) -> T) throws(KeychainError) -> T {
        var retries = 0
        while true {
            dropped = false
            do throws(KeychainError) {
                return try body()
            } catch {
                guard dropped, server == nil, retries < Self.retriesAfterDrop else { throw error }
                retries += 1
                trace("connection dropped (\(error.message)); again, attempt \(retries + 1)")
                CurrentThread.sleep(for: .milliseconds(100 << (retries - 1)))
            }
        }
    }

    static func serverCall<T>(_ body: () throws -> T) throws(KeychainError) -> T {
        do {
            return try body()
        } catch {
            throw keychainError(error)
        }
    }

    private static func keychainError(_ error: any Error) -> KeychainError {
        switch error {
        case let error as KeychainError: error
        case let error as PostgresError: error.keychainError
        default: KeychainError(.internal, "sync: \(error)")
        }
    }
}

/// With LATCHKEY_SYNC_TRACE=FILE, what each round does (ids and versions, never content), appended to FILE.
/// A file that cannot be opened traces nothing (tracing is a debugging aid, never a reason to fail a sync).
private let traceFile: FileDescriptor? = CurrentProcess.environment["LATCHKEY_SYNC_TRACE"].flatMap { path in
    try? Files.openTruncated(path)
}
/// Whether LATCHKEY_SYNC_TRACE names a file being traced to.
var isTracing: Bool { traceFile != nil }

func trace(_ message: @autoclosure () -> String) {
    // A trace line that cannot be written is dropped, for the same reason.
    try? traceFile?.writeAll(Array("sync: \(message())\n".utf8))
}
