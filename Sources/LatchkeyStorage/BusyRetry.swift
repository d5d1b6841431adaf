import LatchkeyPOSIX

/// Waiting out another process's lock on a keychain file: SQLite's own busy timeout (two seconds, set on each
/// connection) first, then the whole attempt again with a jittered exponential back-off, until a deadline. A
/// lock held by another process never reaches a caller as "busy" unless it outlasts the deadline.
/// `DatabasePool` runs every transaction through it, and opening a keychain runs its checks through it.
package enum BusyRetry {
    /// Runs `attempt` again while it fails with SQLite's busy or locked, until `deadline` has passed; then
    /// the error says how long the file stayed locked. `attempt` may run more than once, so it must only
    /// touch the database.
    package static func run<T>(deadline: Duration = .seconds(60), _ attempt: () throws -> T) throws -> T {
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
                CurrentThread.sleep(for: pause + jitter)
                pause = min(pause * 2, .milliseconds(50))
            }
        }
    }
}
