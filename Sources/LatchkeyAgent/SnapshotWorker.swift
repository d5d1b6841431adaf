import FoundationEssentials
import LatchkeyEngine
import LatchkeyPOSIX

/// The agent's scheduled snapshots (`latchkeyd --backup-directory`): a snapshot of the keychain into the
/// directory whenever the newest one there is older than the interval and the keychain changed since it
/// (by the change feed), keeping the newest `keep`. It looks at start and then every minute (or every
/// interval, when that is shorter); a failure (the disk unplugged, the directory unwritable) is logged and
/// tried again at the next look. Snapshots need no key, so a locked keychain is kept as well.
final class SnapshotWorker: Sendable {
    /// When and where.
    struct Schedule: Sendable, Equatable {
        /// The directory (another disk, a synced folder).
        var directory: String
        /// Seconds between snapshots (a day by default).
        var interval: Int = 86_400
        /// How many snapshots of the keychain to keep (14 by default).
        var keep: Int = 14
    }

    private let keychain: KeychainDatabase
    private let schedule: Schedule
    private let log: @Sendable (String) -> Void
    /// Where a failure goes: standard error, verbose or not (a backup that fails must not fail silently).
    private let warn: @Sendable (String) -> Void

    init(
        keychain: KeychainDatabase, schedule: Schedule, log: @escaping @Sendable (String) -> Void,
        warn: @escaping @Sendable (String) -> Void = { StandardError.write("latchkeyd: \($0)\n") }
    ) {
        self.keychain = keychain
        self.schedule = schedule
        self.log = log
        self.warn = warn
    }

    /// Starts the worker's thread; it runs for the life of the process.
    func start() {
        log("backup: a snapshot every \(schedule.interval) s into \(schedule.directory), keeping \(schedule.keep)")
        DetachedThread.start(name: "latchkey-backup") { [self] in
            while true {
                let wait = look()
                CurrentThread.sleep(for: .seconds(wait))
            }
        }
    }

    /// Takes a snapshot when one is due; returns the seconds until the next look.
    func look(now: Date = Date()) -> Int {
        let pause = min(60, schedule.interval)
        do throws(KeychainError) {
            let newest = try SnapshotDirectory.listIfPresent(schedule.directory, keychainID: try keychain.keychainID)
                .snapshots.last
            if let newest {
                // Nothing changed since the newest (whatever its age, even one a clock set back put in the
                // future): no copy of it.
                if try keychain.lastChangeSequence == newest.sequence { return pause }
                let age = now.timeIntervalSince(newest.taken)
                if age >= 0 && age < Double(schedule.interval) {
                    return max(1, min(pause, Int((Double(schedule.interval) - age).rounded(.up))))
                }
            }
            let snapshot = try keychain.takeSnapshot(into: schedule.directory, keep: schedule.keep, now: now)
            log("backup: took \(snapshot.path) (change \(snapshot.sequence), \(snapshot.itemCount) items)")
        } catch {
            warn("backup: \(error.message); trying again in \(pause) s")
        }
        return pause
    }
}
