import FoundationEssentials
import LatchkeyEngine
import LatchkeyPOSIX
import Synchronization

/// Slows down guessing the passphrase through the agent, as a login screen does: after three wrong
/// passphrases in a row, each further attempt must wait 5 s after the last failure, then 10, 20, … up to 10
/// minutes — refused without being tried until then. The count survives agent restarts (a file beside the
/// keychain, `<keychain>.unlock-failures`, mode 0600, a line per bucket) and a right passphrase clears it.
/// Every failure and every refusal is logged. Attempts run one at a time, so parallel connections cannot
/// guess in parallel.
///
/// Failures count per `Bucket` — whose guesses they are — so another program's guesses never lock the owner
/// out: the owner's tools (the `latchkey` beside the agent, and each registered program: registering one needs
/// the passphrase) each have their own count; every other program, and every unidentified caller, shares one
/// (`others`), which bounds how fast programs that copy themselves under new names can guess; the agent's own
/// pinentry dialog has its own; and the login password root hands over (pam_latchkey) is never refused or
/// counted. A program of the user that runs the owner's own tool is that tool to the agent and shares its
/// count (docs/LATCHKEY-SECURITY.md, "Who is calling").
///
/// This bounds guessing through the agent only: someone who can read the keychain file can guess offline at
/// the cost of one Argon2id each (docs/LATCHKEY-SECURITY.md, "Who can attack what").
final class UnlockThrottle: Sendable {
    /// Wrong passphrases in a row that cost no wait.
    static let freeAttempts = 3
    /// The first wait and the longest, in milliseconds.
    static let firstDelay: Int64 = 5_000, maximumDelay: Int64 = 600_000
    /// Whose guesses a failure counts against.
    struct Bucket: Hashable, Sendable {
        /// Its name in the file (no line break; empty for `others`).
        let name: String

        /// Every program that is not one of the owner's tools, and every unidentified caller.
        static let others = Bucket(name: "")
        /// The agent's own pinentry dialog (the Secret Service's unlock prompt).
        static let dialog = Bucket(name: "dialog")
        /// Root handing over the login password (pam_latchkey): never refused, never counted.
        static let login = Bucket(name: "login")

        /// One of the owner's tools, by its executable's path.
        static func tool(_ path: String) -> Bucket {
            Bucket(name: "tool " + path.filter { $0 != "\n" && $0 != "\r" })
        }
    }

    private struct Record: Equatable {
        var failures = 0
        /// When the last failure was (milliseconds since 1970).
        var last: Int64 = 0
    }

    private let path: String
    private let log: @Sendable (String) -> Void
    private let now: @Sendable () -> Int64
    /// Held for a whole attempt: one passphrase is tried at a time.
    private let records: Mutex<[Bucket: Record]>

    /// A throttle for the keychain at `keychainPath`; `now` in milliseconds since 1970.
    init(
        keychainPath: String, log: @escaping @Sendable (String) -> Void,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1_000) }
    ) {
        path = keychainPath + ".unlock-failures"
        self.log = log
        self.now = now
        records = Mutex(Self.load(path))
    }

    /// The wait after `failures` wrong passphrases in a row, in milliseconds.
    static func delay(afterFailures failures: Int) -> Int64 {
        guard failures >= freeAttempts else { return 0 }
        return min(firstDelay << Int64(min(failures - freeAttempts, 20)), maximumDelay)
    }

    /// Milliseconds as whole seconds, rounded up.
    private static func seconds(_ milliseconds: Int64) -> Int64 { (milliseconds + 999) / 1_000 }

    /// Runs `check` (which tries a passphrase) unless `bucket`'s last failures ask for a wait; counts a wrong
    /// passphrase (`errSecAuthFailed`) against `bucket`, clears its count on success. The login password root
    /// hands over is always tried and never counted.
    func attempt<T>(_ what: String, as bucket: Bucket = .others, _ check: () throws(KeychainError) -> T)
        throws(KeychainError) -> T
    {
        try records.withLock { (records) throws(KeychainError) -> T in
            if bucket == .login { return try check() }
            var record = records[bucket] ?? Record()
            let wait = record.last + Self.delay(afterFailures: record.failures) - now()
            if wait > 0 {
                log(
                    "refused \(what) without trying it: \(record.failures) wrong passphrases in a row"
                        + Self.whose(bucket) + "; the next attempt is allowed in \(Self.seconds(wait)) s")
                throw KeychainError(
                    .authFailed,
                    "not tried: \(record.failures) wrong passphrases in a row; try again in \(Self.seconds(wait)) s")
            }
            do throws(KeychainError) {
                let result = try check()
                if records[bucket] != nil {
                    records[bucket] = nil
                    save(records)
                }
                return result
            } catch {
                guard error.status == .authFailed else { throw error }
                record.failures += 1
                record.last = now()
                records[bucket] = record
                save(records)
                let delay = Self.delay(afterFailures: record.failures)
                log(
                    "a wrong passphrase for \(what) (\(record.failures) in a row\(Self.whose(bucket)))"
                        + (delay > 0 ? "; the next attempt is allowed in \(Self.seconds(delay)) s" : ""))
                throw error
            }
        }
    }

    /// How the log names a bucket after a count.
    private static func whose(_ bucket: Bucket) -> String {
        bucket == .others ? "" : " from \(bucket.name)"
    }

    /// The counts in the file: a line per bucket, `<failures> <last failure> <bucket>` (no bucket: `others`,
    /// as the file was before there were buckets). No file: no failures. A line that cannot be parsed counts
    /// as none: that loses a wait, never the keychain.
    private static func load(_ path: String) -> [Bucket: Record] {
        guard let bytes = try? Files.read(path, limit: 64 << 10) else { return [:] }
        var records: [Bucket: Record] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ", maxSplits: 2)
            guard fields.count >= 2, let failures = Int(fields[0]), let last = Int64(fields[1]), failures >= 0 else {
                continue
            }
            records[Bucket(name: fields.count == 3 ? String(fields[2]) : "")] = Record(failures: failures, last: last)
        }
        return records
    }

    private func save(_ records: [Bucket: Record]) {
        do {
            if records.isEmpty {
                if FileStatus.of(path: path) != nil { try Files.remove(path) }
            } else {
                let lines = records.sorted { $0.key.name < $1.key.name }.map { bucket, record in
                    "\(record.failures) \(record.last)" + (bucket.name.isEmpty ? "" : " " + bucket.name) + "\n"
                }
                // Written beside it and renamed over it: a crash leaves the old counts or the new ones.
                let fresh = path + ".new"
                if FileStatus.of(path: fresh) != nil { try Files.remove(fresh) }
                try Files.createExclusive(fresh, contents: Array(lines.joined().utf8), mode: 0o600)
                try Files.rename(fresh, to: path)
            }
        } catch {
            log("could not keep the count of wrong passphrases in \(path): \(error)")
        }
    }
}
