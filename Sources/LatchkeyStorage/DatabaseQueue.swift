import Foundation

/// Serializes every use of one `Connection`: the connection is reachable only inside `read` and `write`,
/// one caller at a time. Several processes share a file through SQLite's locks; a lock held by another
/// process is waited for (SQLite's busy timeout, then whole-transaction retries) and never reaches a
/// caller as "busy" unless it outlasts `busyDeadline`. (The keychain itself uses `DatabasePool`, which adds
/// reader connections; this is the single-connection form.)
package final class DatabaseQueue: @unchecked Sendable {
    // @unchecked: `connection` is used only while `lock` is held, so one thread at a time touches it.
    private let connection: Connection
    private let lock = NSLock()
    /// How long a transaction keeps retrying while another process holds the lock.
    package let busyDeadline: Duration

    /// Wraps `connection`; sets SQLite's own busy timeout to a fraction of `busyDeadline`.
    package init(connection: sending Connection, busyDeadline: Duration = .seconds(60)) {
        connection.setBusyTimeout(milliseconds: 2_000)
        self.connection = connection
        self.busyDeadline = busyDeadline
    }

    /// Runs `body` in a read transaction (a consistent snapshot). Retries sleep with the lock released.
    package func read<T>(_ body: (Connection) throws -> T) throws -> T {
        try Self.retryingWhileBusy(deadline: busyDeadline) {
            try lock.withLock { try connection.transaction(writing: false) { try body(connection) } }
        }
    }

    /// Runs `body` in a write transaction (`BEGIN IMMEDIATE`); all of it commits or none of it does. When
    /// another process holds the write lock, the whole transaction is retried, so `body` must only touch
    /// the database (it may run more than once).
    package func write<T>(_ body: (Connection) throws -> T) throws -> T {
        try Self.retryingWhileBusy(deadline: busyDeadline) {
            try lock.withLock { try connection.transaction(writing: true) { try body(connection) } }
        }
    }

    /// Runs `body` with the connection outside any transaction (pragmas, checkpoints, migrations that
    /// manage their own transaction).
    package func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        try Self.retryingWhileBusy(deadline: busyDeadline) { try lock.withLock { try body(connection) } }
    }

    /// Runs `attempt` again while it fails with SQLite's busy or locked, until `deadline` has passed. For
    /// work on a connection before it has a queue (opening a keychain).
    package static func retryingWhileBusy<T>(deadline: Duration = .seconds(60), _ attempt: () throws -> T) throws -> T {
        let clock = ContinuousClock()
        let start = clock.now
        var pause = Duration.milliseconds(1)
        while true {
            do {
                return try attempt()
            } catch let error as StorageError where error.isBusy {
                if clock.now - start > deadline {
                    throw StorageError(
                        extendedCode: error.extendedCode,
                        message: "the keychain file stayed locked by another process for \(deadline)")
                }
                // Jittered exponential back-off up to 50 ms, so competing processes do not retry in step.
                let jitter = Duration.microseconds(Int.random(in: 0...1_000))
                Thread.sleep(forTimeInterval: Double((pause + jitter).components.attoseconds) / 1e18)
                pause = min(pause * 2, .milliseconds(50))
            }
        }
    }
}
