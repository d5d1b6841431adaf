internal import FoundationEssentials
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
        // Rows left in the inbox by an earlier round (the keychain was locked) go first: they are older.
        try applyInbox(into: &report)
        let applied = clock.now
        try pull(into: &report)
        let pulled = clock.now
        if refused || report.applied > 0 || report.conflicts > 0 { _ = try push(into: &report) }
        trace(
            "round: push \(pushed - started), inbox \(applied - pushed), pull and apply \(pulled - applied), push again \(clock.now - pulled)"
        )
        if let horizon {
            _ = try serverCall { try server.collectTombstones(vault: configuration.vault, horizonSeconds: horizon) }
        }
        try keychain.sync.setValues(["last-sync": Data(Date().formatted(.iso8601).utf8)])
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

    /// Pulls every row after the cursor and writes it, page by page, each page with its cursor in one
    /// transaction (rows that cannot be written yet — the keychain is locked — wait in the inbox). The next
    /// page is fetched, verified, decrypted and sealed again on another thread while the current one is
    /// written. A device whose cursor is below the collected tombstones resynchronises in full.
    ///
    /// The first page is `batchSize * 4` rows, so a round with a little to pull starts writing at once; each
    /// later one twice the one before, up to `batchSize * 16`: a long pull commits four times less often,
    /// and each commit rewrites the leaves its random keys (item ids, primary-key and index digests) touch
    /// once for more rows.
    private func pull(into report: inout SyncReport) throws(KeychainError) {
        let server = try connection()
        var source = try readConnection()
        let vault = configuration.vault
        var cursor = try keychain.sync.cursor()
        var limit = batchSize * 4
        let fetcher = PageFetcher(
            vault: vault, device: configuration.device, keyring: configuration.keyring, sync: keychain.sync)
        // The first page says whether the server went back or collected tombstones this device missed.
        var page: PageFetcher.Page
        while true {
            page = try serverCall { try fetcher.fetch(from: source, after: cursor, limit: limit).get() }
            if source.connection !== server.connection,
                cursor > page.newest || (cursor > 0 && page.collected > cursor)
            {
                // A standby behind what this device pulled lags; it did not go back in time. Whether the server
                // went back, or collected tombstones this device missed, only the primary says: this round reads there.
                trace(
                    "the standby lags: cursor \(cursor), its newest \(page.newest), collected \(page.collected); reading from the primary"
                )
                source = server
                continue
            }
            if cursor > page.newest {
                // The server's newest change is older than one this device pulled: it went back in time (restored
                // from a backup, or a standby promoted without the last commits). What it lost is pushed again.
                report.serverWentBack = true
                trace("server went back: cursor \(cursor) > newest \(page.newest)")
                let versions = try serverCall { try server.versions(vault: vault) }
                try keychain.sync.rebase(onto: versions)
                _ = try push(into: &report)
                cursor = 0
                page = try serverCall { try fetcher.fetch(from: source, after: cursor, limit: limit).get() }
            } else if cursor > 0, page.collected > cursor {
                // Tombstones this device had not seen are gone: read everything again and drop what vanished.
                report.fullResync = true
                let present = try serverCall { try server.itemIDs(vault: vault) }
                _ = try keychain.sync.forgetMissing(present: present)
                cursor = 0
                page = try serverCall { try fetcher.fetch(from: source, after: cursor, limit: limit).get() }
            }
            break
        }
        let start = cursor
        var done = 0
        let reader = source
        while let last = page.count > 0 ? page.last : nil {
            trace("pull after \(cursor): \(page.count) rows up to #\(last), newest \(page.newest)")
            let total = max(Int(page.newest - start), done + page.count)
            if done == 0 { progress?(OperationProgress(.writing, completed: 0, total: total)) }
            // The next page is fetched and made ready while this one is written.
            let nextLimit = min(limit * 2, max(limit, batchSize * 16))
            let next =
                page.count < limit
                ? nil
                : Ahead { () throws(KeychainError) -> Result<PageFetcher.Page, PostgresError> in
                    try fetcher.fetch(from: reader, after: last, limit: nextLimit)
                }
            do {
                try write(page.rows, cursor: last, into: &report)
            } catch {
                next?.wait()
                throw error
            }
            report.pulled += page.count
            done += page.count
            progress?(OperationProgress(.writing, completed: done, total: max(total, done)))
            cursor = last
            guard let next else { break }
            limit = nextLimit
            let waiting = ContinuousClock.now
            page = try serverCall { try next.value().get() }
            trace("waited \(ContinuousClock.now - waiting) for the next page")
        }
        // Pages commit without moving the WAL into the file each time; after more than one, move it now.
        if done > batchSize * 4 {
            let checkpointing = ContinuousClock.now
            try keychain.sync.checkpoint()
            trace("checkpointed in \(ContinuousClock.now - checkpointing)")
        }
        try serverCall { try server.reportCursor(vault: vault, device: configuration.device, cursor: cursor) }
    }

    /// Writes the inbox (rows an earlier round could not write: the keychain was locked) in the server's
    /// order; what still cannot be written stays.
    private func applyInbox(into report: inout SyncReport) throws(KeychainError) {
        let waiting = try keychain.sync.inboxCount()
        guard waiting > 0 else { return }
        let fetcher = PageFetcher(
            vault: configuration.vault, device: configuration.device, keyring: configuration.keyring,
            sync: keychain.sync)
        var after: Int64 = -1
        var written = 0
        progress?(OperationProgress(.writing, completed: 0, total: waiting))
        while true {
            let inbox = try keychain.sync.inbox(limit: batchSize).filter { $0.sequence > after }
            guard let last = inbox.last else { break }
            after = last.sequence
            try write(try fetcher.prepare(inbox), cursor: nil, into: &report)
            written += inbox.count
            progress?(OperationProgress(.writing, completed: min(written, waiting), total: waiting))
        }
    }

    /// Writes prepared rows (with the cursor when they are fresh from the server) and counts what they did.
    private func write(_ rows: [SyncPreparedRow], cursor: Int64?, into report: inout SyncReport) throws(KeychainError) {
        let vault = configuration.vault
        let keyring = configuration.keyring
        let key = keyring.current
        let keyID = keyring.currentID
        let device = configuration.device
        let sealer: SyncConflictSealer = { record in
            guard let key else { return (0, Data()) }
            return (keyID, VaultCrypto.seal(record, vault: vault, keyID: keyID, key: key, author: device).ciphertext)
        }
        let clock = ContinuousClock()
        let started = clock.now
        let written = try keychain.sync.write(rows, cursor: cursor, sealer: sealer) { envelope, opened, known in
            Self.action(for: envelope, opened: opened, known: known, device: device)
        }
        trace("page of \(rows.count): write \(clock.now - started)")
        // By index, and the row looked at only when tracing: a copy of each row costs a dozen retains.
        for (index, result) in written.enumerated() {
            if isTracing {
                let envelope = rows[index].envelope
                trace(
                    "row #\(envelope.sequence) \(Hex.encode(envelope.itemID).prefix(6)) v\(envelope.version) by \(Hex.encode(envelope.author).prefix(4)): \(Self.name(of: result.action)) \(result.outcome.map { "\($0)" } ?? "")"
                )
            }
            if case .reject = result.action { report.rejected += 1 }
            switch result.outcome {
            case .applied?: report.applied += 1
            case .appliedOverConflict?:
                report.applied += 1
                report.conflicts += 1
            case .lostToExistingItem?: report.conflicts += 1
            case .locked?: report.waiting += 1
            case nil: if case .apply = result.action { report.rejected += 1 }
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
    /// and one that failed to open was altered or moved: both are refused. A version this device has is
    /// dropped (verified first); this device's own push whose acknowledgement was lost is recorded as the
    /// server's version; anything else is applied.
    private static func action(
        for envelope: SyncEnvelope, opened: Result<SyncRecord, KeychainError>,
        known: (version: Int64, deleted: Bool)?, device: Data
    ) -> SyncInboxAction {
        if let known, envelope.version < known.version {
            return .reject(
                "version \(envelope.version) is older than version \(known.version) this device has: replayed or rolled back"
            )
        }
        let record: SyncRecord
        switch opened {
        case .success(let opened): record = opened
        case .failure(let error): return .reject(error.detail ?? error.message)
        }
        if let known, envelope.version == known.version { return .discard }
        if envelope.author == device { return .acknowledge }
        return .apply(record)
    }
}
