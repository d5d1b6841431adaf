internal import FoundationEssentials
import LatchkeyCrypto
package import LatchkeyEngine
package import LatchkeyPOSIX
internal import Synchronization

/// Sync in the background (the agent runs one): a round after each local change (`nudge`, and the change
/// feed, read every two seconds, for writers that do not nudge), a pull whenever the server's NOTIFY rings
/// — a doorbell only: the pull reads by sequence, so a lost notification loses nothing — a round every
/// minute regardless, and retries with backoff (1 s doubling to 60 s) while the server is away. Offline,
/// the keychain works as ever; changes wait in it. Through a pooler (`latchkey_mode=pooled`) there is no
/// NOTIFY: the worker polls instead (`SyncPollCadence`) and runs a round every ten minutes regardless.
package final class SyncWorker: Sendable {
    private let keychain: KeychainDatabase
    private let log: @Sendable (String) -> Void
    private let doorbell: (read: FileDescriptor, write: FileDescriptor)
    private let rounds = Atomic<Int>(0)

    /// A worker for `keychain` (not started). errSecIO when its wake-up pipe cannot be made.
    package init(keychain: KeychainDatabase, log: @escaping @Sendable (String) -> Void) throws(KeychainError) {
        self.keychain = keychain
        self.log = log
        do {
            doorbell = try Pipes.doorbell()
        } catch {
            throw KeychainError(.io, "cannot make the sync worker's pipe: \(error)")
        }
    }

    /// Rounds completed so far (for tests and the benchmark).
    package var completedRounds: Int { rounds.load(ordering: .acquiring) }

    /// Wakes the worker for a round now (after a local change, an unlock).
    package func nudge() { doorbell.write.ring() }

    /// Starts the worker's thread; it runs for the life of the process.
    package func start() {
        DetachedThread.start(name: "latchkey-sync") { [self] in run() }
    }

    private func run() {
        var client: SyncClient?
        var backoff: Int32 = 1_000
        // A feed that cannot be read now is read on the next tick.
        var seenChange = (try? keychain.lastChangeSequence) ?? 0
        // The connection the LISTEN was sent on, held (not its address, which a new connection may reuse).
        var listening: PostgresConnection?
        var cadence =
            SyncPollCadence.fromEnvironment(CurrentProcess.environment["LATCHKEY_SYNC_POLL"])
            ?? SyncPollCadence()
        while true {
            if client == nil {
                guard keychain.lockState.isProtectedDataAvailable else {
                    wait(milliseconds: 5_000, socket: nil)
                    continue
                }
                do throws(KeychainError) {
                    // The plaintext sync state says whether to read the configuration at all.
                    guard try keychain.sync.value("vault") != nil else { throw KeychainError(.notAvailable) }
                    client = try SyncClient.open(keychain)
                    log(
                        "sync: this keychain syncs with vault \(Hex.encode(client!.configuration.vault)) as \(client!.configuration.deviceName)"
                    )
                } catch {
                    // Not set up for sync (or not readable yet): look again in a minute, whatever rings meanwhile.
                    CurrentThread.sleep(for: .seconds(60))
                    doorbell.read.drain()
                    continue
                }
            }
            guard let active = client else { continue }
            do throws(KeychainError) {
                // LISTEN before the round, not after it: a change committed after the LISTEN rings, and one
                // committed before it is pulled by the round, so none falls between (a change another device
                // pushed while the first round ran went unseen until the minute's round).
                if active.connectionMode != .pooled { try listen(active, &listening) }
                let report = try active.sync()
                rounds.add(1, ordering: .releasing)
                if report != SyncReport() {
                    log(
                        "sync: pushed \(report.pushed), pulled \(report.pulled), applied \(report.applied), conflicts \(report.conflicts), rejected \(report.rejected)"
                    )
                }
                if report.rejected > 0 {
                    // Name what the server did (ids, versions and reasons; never content).
                    for rejection in try keychain.sync.rejections().suffix(report.rejected) {
                        log(
                            "sync: refused change \(rejection.sequence) of item \(Hex.encode(rejection.itemID)) version \(rejection.version): \(rejection.reason)"
                        )
                    }
                }
                if report.serverWentBack {
                    log(
                        "sync: the server had gone back in time (restored from a backup?); what it lost was pushed again"
                    )
                }
                backoff = 1_000
                if active.connectionMode == .pooled {
                    if report.pulled > 0 || report.pushed > 0 { cadence.noteChange(at: .now) }
                    try waitPolling(active, cadence: &cadence, seenChange: &seenChange)
                    continue
                }
                let server = try active.connection()
                // The round reconnected (the server went away meanwhile): listen on the new connection, then
                // a round again, for what changed between.
                guard listening === server.connection else { continue }
                seenChange = try keychain.lastChangeSequence
                // Until something happens: the server rings, a nudge, a local change, or a minute passes.
                var waited: Int32 = 0
                while waited < 60_000 {
                    if wait(milliseconds: 2_000, socket: server.connection) { break }
                    waited += 2_000
                    let latest = try keychain.lastChangeSequence
                    if latest != seenChange {
                        let local = try keychain.changes(after: seenChange, limit: 1_000).contains {
                            $0.synchronizable && $0.origin != .sync
                        }
                        seenChange = latest
                        if local { break }
                    }
                }
            } catch {
                switch error.status {
                case .authFailed:
                    log("sync: stopped: \(error.message)")
                    client = nil
                    wait(milliseconds: 600_000, socket: nil)
                case .interactionNotAllowed:
                    wait(milliseconds: 5_000, socket: nil)
                default:
                    log("sync: \(error.message); retrying in \(backoff / 1_000) s")
                    active.disconnect()
                    listening = nil
                    wait(milliseconds: backoff, socket: nil)
                    backoff = min(backoff * 2, 60_000)
                }
            }
        }
    }

    /// LISTENs for the vault's notifications on the client's connection, unless it does already.
    private func listen(_ client: SyncClient, _ listening: inout PostgresConnection?) throws(KeychainError) {
        let server = try client.connection()
        guard listening !== server.connection else { return }
        listening = nil  // The one before goes, whatever comes of this LISTEN.
        do throws(PostgresError) {
            try server.listen(vault: client.configuration.vault)
            listening = server.connection
        } catch {
            throw error.keychainError
        }
    }

    /// A pooled device's wait between rounds: it holds no server connection and LISTENs to nothing, but
    /// asks the server whether anything changed after its cursor at the cadence's interval (fast after a
    /// change, slow when idle, jittered), reads the change feed every two seconds, and runs a round when
    /// the server changed, on a nudge or a local change, or every ten minutes regardless (to check in).
    private func waitPolling(_ client: SyncClient, cadence: inout SyncPollCadence, seenChange: inout Int64)
        throws(KeychainError)
    {
        var generator = SystemRandomNumberGenerator()
        let started = ContinuousClock.now
        var nextPoll = started + cadence.interval(at: started, using: &generator)
        var nextFeed = started + .seconds(2)
        while ContinuousClock.now - started < .seconds(600) {
            let wake = min(nextPoll, nextFeed)
            let milliseconds = max(0, (wake - ContinuousClock.now).milliseconds)
            if wait(milliseconds: Int32(clamping: milliseconds), socket: nil) {
                cadence.noteChange(at: .now)
                return
            }
            let now = ContinuousClock.now
            if now >= nextFeed {
                nextFeed = now + .seconds(2)
                let latest = try keychain.lastChangeSequence
                if latest != seenChange {
                    let local = try keychain.changes(after: seenChange, limit: 1_000).contains {
                        $0.synchronizable && $0.origin != .sync
                    }
                    seenChange = latest
                    if local {
                        cadence.noteChange(at: now)
                        return
                    }
                }
            }
            if now >= nextPoll {
                if try client.serverHasChanges() {
                    cadence.noteChange(at: .now)
                    return
                }
                nextPoll = ContinuousClock.now + cadence.interval(at: .now, using: &generator)
            }
        }
    }

    /// Waits for the doorbell or the server's notification; true when either rang.
    @discardableResult
    private func wait(milliseconds: Int32, socket connection: PostgresConnection?) -> Bool {
        Self.wait(milliseconds: milliseconds, doorbell: doorbell.read, connection: connection)
    }

    /// Waits up to `milliseconds` for `doorbell` or a notification on `connection`; true when either rang.
    /// A notification that came during the round just run — while the connection was busy with its
    /// queries — was read off the socket with their results and waits in libpq's queue: it counts at once
    /// (polling the socket alone left such a change unseen until the next minute's round).
    package static func wait(milliseconds: Int32, doorbell: FileDescriptor, connection: PostgresConnection?) -> Bool {
        if let connection, !connection.queuedNotifications().isEmpty { return true }
        let ready = FileDescriptor.waitReadable(
            [doorbell] + (connection.map { [$0.socket] } ?? []), milliseconds: milliseconds)
        if ready.contains(doorbell) { doorbell.drain() }
        if let connection, ready.contains(connection.socket) {
            // A closed connection reads as ready too; the next round finds it broken and reconnects.
            _ = try? connection.notifications(waitingUpTo: 0)
        }
        return !ready.isEmpty
    }
}

private extension Duration {
    /// Whole milliseconds (rounded down).
    var milliseconds: Int64 { components.seconds * 1_000 + components.attoseconds / 1_000_000_000_000_000 }
}
