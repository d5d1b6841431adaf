internal import Foundation
internal import LatchkeyCrypto
package import LatchkeyEngine
internal import LatchkeyPOSIX

/// A round: fetch new keys, push, pull, verify and apply.
extension SyncClient {
    /// One round: fetch new vault keys, push local changes (compare-and-swap), pull the server's changes
    /// after the cursor, verify and apply them, and push again what the round produced (deletions of
    /// primary-key losers). `collectTombstonesOlderThan` (seconds) also collects tombstones on the server.
    @discardableResult
    package func sync(collectTombstonesOlderThan horizon: Int? = nil) throws(KeychainError) -> SyncReport {
        // A round whose connection dropped runs again on a new one: every step of it is safe to repeat.
        try retryingDrops { () throws(KeychainError) -> SyncReport in try round(collectTombstonesOlderThan: horizon) }
    }

    /// Whether the server holds changes after this device's cursor — or went back before it — (the poll
    /// of a pooled device: one indexed lookup in one short transaction, no session state). A dropped
    /// connection is made again, as for a round.
    package func serverHasChanges() throws(KeychainError) -> Bool {
        try retryingDrops { () throws(KeychainError) -> Bool in
            let server = try connection()
            let newest = try serverCall { try server.newestChange(vault: configuration.vault) }
            return newest != (try keychain.sync.cursor())
        }
    }

    /// Direct or pooled, as the connection string says (`SyncConnectionString`); direct when it cannot be read.
    package var connectionMode: SyncConnectionMode {
        do throws(PostgresError) {
            return try SyncConnectionString(configuration.server).mode
        } catch {
            return .direct  // Connecting reports the malformed string itself.
        }
    }

    private func round(collectTombstonesOlderThan horizon: Int?) throws(KeychainError) -> SyncReport {
        var report = SyncReport()
        guard try completeJoin() else {
            throw SyncFailure.awaitingApproval.error(
                .interactionNotAllowed,
                "this device waits for approval: run latchkey sync approve \(joinCode) on a device of the vault")
        }
        let server = try connection()
        let state = try serverCall { try server.checkIn(vault: configuration.vault, device: configuration.device) }
        guard state == "active" else {
            throw SyncFailure.deviceRemoved.error(
                .authFailed,
                state == nil ? "the server does not know this device" : "this device was removed from the vault")
        }
        try refreshKeys()
        let clock = ContinuousClock()
        let started = clock.now
        let refused = try push(into: &report)
        let pushed = clock.now
        try pull(into: &report)
        let pulled = clock.now
        try applyInbox(into: &report)
        let applied = clock.now
        if refused || report.applied > 0 || report.conflicts > 0 { _ = try push(into: &report) }
        trace(
            "round: push \(pushed - started), pull \(pulled - pushed), apply \(applied - pulled), push again \(clock.now - applied)"
        )
        if let horizon {
            _ = try serverCall { try server.collectTombstones(vault: configuration.vault, horizonSeconds: horizon) }
        }
        try keychain.sync.setValues(["last-sync": Data(ISO8601DateFormatter().string(from: Date()).utf8)])
        return report
    }

    /// Pushes local changes in batches; returns whether the server refused any (a version moved on there).
    private func push(into report: inout SyncReport) throws(KeychainError) -> Bool {
        let server = try connection()
        guard let key = configuration.keyring.current else { return false }
        let keyID = configuration.keyring.currentID
        var refusedAny = false
        func send(_ batch: [SyncOutgoing]) throws(KeychainError) {
            let rows = batch.map {
                (
                    VaultCrypto.seal(
                        $0.record, vault: configuration.vault, keyID: keyID, key: key, author: configuration.device),
                    $0.expectedVersion
                )
            }
            let results = try serverCall {
                try server.push(vault: configuration.vault, device: configuration.device, rows)
            }
            var acknowledged: [(itemID: Data, version: Int64, deleted: Bool)] = []
            for (row, result) in zip(rows, results) {
                if result.sequence != nil {
                    acknowledged.append((row.0.itemID, row.0.version, row.0.deleted))
                } else {
                    refusedAny = true
                }
            }
            trace(
                "push \(rows.map { "\(Hex.encode($0.0.itemID).prefix(6)) v\($0.0.version)/e\($0.1)" }) -> \(results.map { $0.sequence.map { "#\($0)" } ?? "refused@v\($0.serverVersion)" })"
            )
            report.pushed += acknowledged.count
            try keychain.sync.acknowledge(acknowledged)
        }
        // The items written since the last look, in id order, each looked at once per round (refused ones
        // stay marked and go again after the pull).
        var after: Data?
        var waiting = 0
        while true {
            let (batch, locked, last) = try keychain.sync.outgoing(after: after, limit: batchSize)
            waiting += locked
            guard let last else { break }
            after = last
            if !batch.isEmpty { try send(batch) }
        }
        report.waiting = max(report.waiting, waiting)
        return refusedAny
    }

    /// Pulls every row after the cursor into the inbox (page by page, each page with its cursor in one
    /// transaction); a device whose cursor is below the collected tombstones resynchronises in full.
    private func pull(into report: inout SyncReport) throws(KeychainError) {
        let server = try connection()
        var source = try readConnection()
        let vault = configuration.vault
        var cursor = try keychain.sync.cursor()
        var first = true
        var reading: (start: Int64, total: Int, done: Int)?
        while true {
            let (rows, collected, newest) = try serverCall {
                try source.pull(vault: vault, after: cursor, limit: batchSize * 4)
            }
            if first, source.connection !== server.connection, cursor > newest || (cursor > 0 && collected > cursor) {
                // A standby behind what this device pulled lags; it did not go back in time. Whether the server
                // went back, or collected tombstones this device missed, only the primary says: this round reads there.
                trace(
                    "the standby lags: cursor \(cursor), its newest \(newest), collected \(collected); reading from the primary"
                )
                source = server
                continue
            }
            if first, cursor > newest {
                // The server's newest change is older than one this device pulled: it went back in time (restored
                // from a backup, or a standby promoted without the last commits). What it lost is pushed again.
                report.serverWentBack = true
                trace("server went back: cursor \(cursor) > newest \(newest)")
                let versions = try serverCall { try server.versions(vault: vault) }
                try keychain.sync.rebase(onto: versions)
                _ = try push(into: &report)
                cursor = 0
                first = false
                continue
            }
            if first, cursor > 0, collected > cursor {
                // Tombstones this device had not seen are gone: read everything again and drop what vanished.
                report.fullResync = true
                let present = try serverCall { try server.itemIDs(vault: vault) }
                _ = try keychain.sync.forgetMissing(present: present)
                cursor = 0
                first = false
                continue
            }
            first = false
            guard let last = rows.last else { break }
            if reading == nil { reading = (cursor, max(Int(newest - cursor), rows.count), 0) }
            trace("pull after \(cursor): \(rows.count) rows, #\(rows[0].sequence)…#\(last.sequence), newest \(newest)")
            // This device's own pushes coming back at the version it knows need no inbox: it wrote them.
            let known = try keychain.sync.knownVersions(rows.filter { $0.author == configuration.device }.map(\.itemID))
            let incoming = rows.filter { $0.author != configuration.device || known[$0.itemID]?.version != $0.version }
            try keychain.sync.receive(incoming, cursor: last.sequence)
            report.pulled += rows.count
            if var current = reading {
                current.done += rows.count
                reading = current
                progress?(OperationProgress(.reading, completed: current.done, total: max(current.total, current.done)))
            }
            cursor = last.sequence
            if rows.count < batchSize * 4 { break }
        }
        try serverCall { try server.reportCursor(vault: vault, device: configuration.device, cursor: cursor) }
    }

    /// Verifies and applies the inbox in the server's order. A row older than the version this device has
    /// is a replay or a rollback, and one that fails to open was altered or moved: both are refused and
    /// recorded, nothing of them applied, and the other rows go on.
    private func applyInbox(into report: inout SyncReport) throws(KeychainError) {
        let vault = configuration.vault
        let keyring = configuration.keyring
        let key = keyring.current
        let keyID = keyring.currentID
        let sealer: SyncConflictSealer = { [configuration] record in
            guard let key else { return (0, Data()) }
            return (
                keyID,
                VaultCrypto.seal(record, vault: vault, keyID: keyID, key: key, author: configuration.device).ciphertext
            )
        }
        var after: Int64 = -1
        let waiting = try keychain.sync.inboxCount()
        var written = 0
        while true {
            let inbox = try keychain.sync.inbox(limit: batchSize).filter { $0.sequence > after }
            guard let last = inbox.last else { break }
            if written == 0 { progress?(OperationProgress(.writing, completed: 0, total: waiting)) }
            defer {
                written += inbox.count
                progress?(OperationProgress(.writing, completed: min(written, waiting), total: waiting))
            }
            after = last.sequence
            let clock = ContinuousClock()
            let started = clock.now
            let known = try keychain.sync.knownVersions(inbox.map(\.itemID))
            let looked = clock.now
            let page = inbox.map { envelope -> (envelope: SyncEnvelope, action: SyncInboxAction) in
                (
                    envelope,
                    Self.action(
                        for: envelope, known: known[envelope.itemID], vault: vault, keyring: keyring,
                        device: configuration.device)
                )
            }
            let opened = clock.now
            let outcomes = try keychain.sync.process(page, sealer: sealer)
            trace(
                "page of \(page.count): known \(looked - started), open \(opened - looked), write \(clock.now - opened)"
            )
            for ((envelope, action), outcome) in zip(page, outcomes) {
                trace(
                    "inbox #\(envelope.sequence) \(Hex.encode(envelope.itemID).prefix(6)) v\(envelope.version) by \(Hex.encode(envelope.author).prefix(4)) known \(known[envelope.itemID].map { "v\($0.version)" } ?? "-"): \(Self.name(of: action)) \(outcome.map { "\($0)" } ?? "")"
                )
            }
            for ((_, action), outcome) in zip(page, outcomes) {
                if case .reject = action { report.rejected += 1 }
                switch outcome {
                case .applied?: report.applied += 1
                case .appliedOverConflict?:
                    report.applied += 1
                    report.conflicts += 1
                case .lostToExistingItem?: report.conflicts += 1
                case .locked?: report.waiting += 1
                case nil: if case .apply = action { report.rejected += 1 }
                }
            }
        }
    }

    /// An action's name for the trace (never the record it carries).
    private static func name(of action: SyncInboxAction) -> String {
        switch action {
        case .discard: "discard"
        case .acknowledge: "acknowledge"
        case .reject(let reason): "reject (\(reason))"
        case .apply: "apply"
        }
    }

    /// What to do with a pulled row. One older than the version this device has is a replay or a rollback,
    /// and one that fails to open was altered or moved: both are refused. A version this device has is
    /// dropped (verified first); this device's own push whose acknowledgement was lost is recorded as the
    /// server's version; anything else is applied.
    private static func action(
        for envelope: SyncEnvelope, known: (version: Int64, deleted: Bool)?, vault: Data, keyring: VaultKeyring,
        device: Data
    ) -> SyncInboxAction {
        if let known, envelope.version < known.version {
            return .reject(
                "version \(envelope.version) is older than version \(known.version) this device has: replayed or rolled back"
            )
        }
        let record: SyncRecord
        do throws(KeychainError) {
            record = try VaultCrypto.open(envelope, vault: vault, keyring: keyring)
        } catch {
            return .reject(error.detail ?? error.message)
        }
        if let known, envelope.version == known.version { return .discard }
        if envelope.author == device { return .acknowledge }
        return .apply(record)
    }
}
