import Foundation
import LatchkeyEngine
import LatchkeyPOSIX
import Synchronization

/// Slows down guessing the passphrase through the agent, as a login screen does: after three wrong
/// passphrases in a row, each further attempt must wait 5 s after the last failure, then 10, 20, … up to 10
/// minutes — refused without being tried until then. The count survives agent restarts (a file beside the
/// keychain, `<keychain>.unlock-failures`, mode 0600) and a right passphrase clears it. Every failure and
/// every refusal is logged. Attempts run one at a time, so parallel connections cannot guess in parallel.
///
/// This bounds guessing through the agent only: someone who can read the keychain file can guess offline at
/// the cost of one Argon2id each (docs/LATCHKEY-SECURITY.md, "Who can attack what").
final class UnlockThrottle: Sendable {
    /// Wrong passphrases in a row that cost no wait.
    static let freeAttempts = 3
    /// The first wait and the longest, in milliseconds.
    static let firstDelay: Int64 = 5_000, maximumDelay: Int64 = 600_000

    private struct Record: Equatable {
        var failures = 0
        /// When the last failure was (milliseconds since 1970).
        var last: Int64 = 0
    }

    private let path: String
    private let log: @Sendable (String) -> Void
    private let now: @Sendable () -> Int64
    /// Held for a whole attempt: one passphrase is tried at a time.
    private let record: Mutex<Record>

    /// A throttle for the keychain at `keychainPath`; `now` in milliseconds since 1970.
    init(
        keychainPath: String, log: @escaping @Sendable (String) -> Void,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1_000) }
    ) {
        path = keychainPath + ".unlock-failures"
        self.log = log
        self.now = now
        record = Mutex(Self.load(path))
    }

    /// The wait after `failures` wrong passphrases in a row, in milliseconds.
    static func delay(afterFailures failures: Int) -> Int64 {
        guard failures >= freeAttempts else { return 0 }
        return min(firstDelay << Int64(min(failures - freeAttempts, 20)), maximumDelay)
    }

    /// Milliseconds as whole seconds, rounded up.
    private static func seconds(_ milliseconds: Int64) -> Int64 { (milliseconds + 999) / 1_000 }

    /// Runs `check` (which tries a passphrase) unless the last failures ask for a wait; counts a wrong
    /// passphrase (`errSecAuthFailed`), clears the count on success.
    func attempt<T>(_ what: String, _ check: () throws(KeychainError) -> T) throws(KeychainError) -> T {
        try record.withLock { (record) throws(KeychainError) -> T in
            let wait = record.last + Self.delay(afterFailures: record.failures) - now()
            if wait > 0 {
                log(
                    "refused \(what) without trying it: \(record.failures) wrong passphrases in a row; "
                        + "the next attempt is allowed in \(Self.seconds(wait)) s")
                throw KeychainError(
                    .authFailed,
                    "not tried: \(record.failures) wrong passphrases in a row; try again in \(Self.seconds(wait)) s")
            }
            do throws(KeychainError) {
                let result = try check()
                if record.failures > 0 {
                    record = Record()
                    save(record)
                }
                return result
            } catch {
                guard error.status == .authFailed else { throw error }
                record.failures += 1
                record.last = now()
                save(record)
                let delay = Self.delay(afterFailures: record.failures)
                log(
                    "a wrong passphrase for \(what) (\(record.failures) in a row)"
                        + (delay > 0 ? "; the next attempt is allowed in \(Self.seconds(delay)) s" : ""))
                throw error
            }
        }
    }

    private static func load(_ path: String) -> Record {
        // No file: no failures. One that cannot be read or parsed counts as none: that loses a wait, never
        // the keychain.
        guard let bytes = try? Files.read(path, limit: 256) else { return Record() }
        let fields = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, let failures = Int(fields[0]), let last = Int64(fields[1]), failures >= 0 else {
            return Record()
        }
        return Record(failures: failures, last: last)
    }

    private func save(_ record: Record) {
        do {
            if record.failures == 0 {
                if FileStatus.of(path: path) != nil { try Files.remove(path) }
            } else {
                // Written beside it and renamed over it: a crash leaves the old count or the new one.
                let fresh = path + ".new"
                if FileStatus.of(path: fresh) != nil { try Files.remove(fresh) }
                try Files.createExclusive(
                    fresh, contents: Array("\(record.failures) \(record.last)\n".utf8), mode: 0o600)
                try Files.rename(fresh, to: path)
            }
        } catch {
            log("could not keep the count of wrong passphrases in \(path): \(error)")
        }
    }
}
