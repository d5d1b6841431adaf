package import Foundation
internal import LatchkeyCrypto
package import LatchkeyEngine

/// What one sync round did.
package struct SyncReport: Sendable, Equatable {
    /// Rows the server accepted from this device.
    package var pushed = 0
    /// Rows pulled from the server.
    package var pulled = 0
    /// Other devices' versions written to this keychain.
    package var applied = 0
    /// Versions that lost and were kept as conflict records.
    package var conflicts = 0
    /// Rows refused on verification.
    package var rejected = 0
    /// Rows kept in the inbox until unlock, and local changes not pushed while their class is locked.
    package var waiting = 0
    /// Whether the round resynchronised in full (this device came back after tombstones were collected).
    package var fullResync = false
    /// Whether the server was found older than this device's last pull (restored from a backup): the round
    /// pushed again what it lost and read everything again.
    package var serverWentBack = false

    package init() {}
}

/// A device of the vault as `latchkey sync status` shows it.
package struct SyncDeviceStatus: Sendable, Equatable {
    package var name: String
    package var state: String
    package var lastSeen: String
    package var isThisDevice: Bool
    /// Whether its approval tag verifies under this device's vault keys (a device the server slipped in does not).
    package var verified: Bool
}

/// Sync for one keychain: set up a vault, join one, approve devices, push and pull, resolve conflicts,
/// remove a device. Each method that talks to the server connects when it has no connection; a lost
/// connection is errSecNotAvailable and the next call reconnects. Not for concurrent use (one owner).
package final class SyncClient {
    package let keychain: KeychainDatabase
    package private(set) var configuration: SyncConfiguration
    private var server: SyncServer?

    /// Rows per push and per page applied; a pull page is four times as many.
    package var batchSize = 1_000

    /// Hears of the rows pulled (`reading`, of about as many as the server has changes after the cursor)
    /// and of those written (`writing`, of the inbox), page by page — a first sync of a large vault takes a
    /// while. Rounds with nothing to pull or apply report nothing.
    package var progress: ProgressHandler?

    package init(keychain: KeychainDatabase, configuration: SyncConfiguration) {
        self.keychain = keychain
        self.configuration = configuration
    }

    /// The client of a keychain set up for sync; errSecNotAvailable when it is not.
    package static func open(_ keychain: KeychainDatabase) throws(KeychainError) -> SyncClient {
        guard let configuration = try SyncConfiguration.load(from: keychain) else {
            throw KeychainError(.notAvailable, "this keychain is not set up for sync (latchkey sync setup or join)")
        }
        return SyncClient(keychain: keychain, configuration: configuration)
    }

    // MARK: Setting up

    /// Creates a vault on the server for this keychain: this device's key pair, vault key 1, the recovery
    /// code's key pair (the code is returned, to be shown once, and kept nowhere). Then pushes everything.
    package static func setup(_ keychain: KeychainDatabase, server conninfo: String, deviceName: String)
        throws(KeychainError) -> (client: SyncClient, recoveryCode: String, fingerprint: String)
    {
        guard try SyncConfiguration.load(from: keychain) == nil else {
            throw KeychainError(.duplicateItem, "this keychain is set up for sync already (latchkey sync leave first)")
        }
        try validate(deviceName: deviceName)
        let vault = SecureRandom.bytes(16), device = SecureRandom.bytes(16)
        let keyPair = BoxKeyPair.random()
        var keyring = VaultKeyring()
        let key = SecureBytes(randomCount: AEAD.keyLength)
        keyring.insert(key, id: 1)
        let code = VaultCrypto.newRecoveryCode()
        let recovery = try VaultCrypto.recoveryKeys(code: code, vault: vault)
        let server = try connect(conninfo)
        try serverCall {
            try server.createVault(vault)
            try server.registerDevice(
                vault: vault, id: device, name: deviceName, publicKey: keyPair.publicKey, state: "active",
                approval: VaultCrypto.approval(vault: vault, device: device, publicKey: keyPair.publicKey, keyID: 1, key: key))
            let recoveryID = SecureRandom.bytes(16)
            try server.registerDevice(vault: vault, id: recoveryID, name: "recovery code", publicKey: recovery.keyPair.publicKey,
                                      state: "recovery", approval: nil)
            try server.putKeys(vault: vault, [
                (device, 1, try VaultCrypto.deliver(key, id: 1, vault: vault, to: keyPair.publicKey, authKey: nil)),
                (recoveryID, 1, try VaultCrypto.deliver(key, id: 1, vault: vault, to: recovery.keyPair.publicKey, authKey: recovery.tagKey)),
            ])
        }
        let configuration = SyncConfiguration(server: conninfo, vault: vault, device: device, deviceName: deviceName,
                                              keyPair: keyPair, keyring: keyring)
        try keychain.resetSync()
        try configuration.save(to: keychain)
        try keychain.setSyncValues(["vault": vault, "device": device])
        let client = SyncClient(keychain: keychain, configuration: configuration)
        client.server = server
        return (client, code, VaultCrypto.fingerprint(vault: vault, firstKey: key))
    }

    /// Registers this keychain as a new device of a vault. With a recovery code, it gets the vault keys at
    /// once (errSecAuthFailed for a wrong code); without, it waits as `pending` for `approve` on a device of
    /// the vault: the returned code is what that device asks for. `vault` may be left out when the server
    /// holds one vault.
    package static func join(_ keychain: KeychainDatabase, server conninfo: String, vault requested: Data?, deviceName: String,
                             recoveryCode: String?) throws(KeychainError) -> (client: SyncClient, joinCode: String)
    {
        if let existing = try SyncConfiguration.load(from: keychain) {
            guard !existing.isJoined else {
                throw KeychainError(.duplicateItem, "this keychain is set up for sync already (latchkey sync leave first)")
            }
            try remove(existing, from: keychain)
        }
        try validate(deviceName: deviceName)
        let server = try connect(conninfo)
        let vault: Data
        if let requested {
            vault = requested
        } else {
            let vaults = try serverCall { try server.vaults() }
            guard vaults.count == 1, let only = vaults.first else {
                throw KeychainError.param(vaults.isEmpty ? "the server holds no vault (latchkey sync setup makes one)"
                                          : "the server holds \(vaults.count) vaults: name one with --vault")
            }
            vault = only
        }
        let devices = try serverCall { try server.devices(vault: vault) }
        guard !devices.isEmpty else { throw KeychainError(.itemNotFound, "the server has no vault \(vault.hexString)") }
        guard !devices.contains(where: { $0.name == deviceName && $0.state != "removed" }) else {
            throw KeychainError(.duplicateItem, "the vault has a device named \(deviceName) already")
        }
        let device = SecureRandom.bytes(16)
        let keyPair = BoxKeyPair.random()
        var configuration = SyncConfiguration(server: conninfo, vault: vault, device: device, deviceName: deviceName,
                                              keyPair: keyPair, keyring: VaultKeyring())
        if let recoveryCode {
            let recovery = try VaultCrypto.recoveryKeys(code: recoveryCode, vault: vault)
            guard let row = devices.first(where: { $0.state == "recovery" && $0.publicKey == recovery.keyPair.publicKey }) else {
                throw KeychainError(.authFailed, "the recovery code is not this vault's")
            }
            let delivered = try serverCall { try server.keys(vault: vault, device: row.id) }
            configuration.keyring = try openChain(delivered, vault: vault, keyPair: recovery.keyPair, firstAuth: recovery.tagKey)
            guard let current = configuration.keyring.current else { throw KeychainError(.authFailed, "the vault has no key for the recovery code") }
            let currentID = configuration.keyring.currentID
            try serverCall {
                try server.registerDevice(
                    vault: vault, id: device, name: deviceName, publicKey: keyPair.publicKey, state: "active",
                    approval: VaultCrypto.approval(vault: vault, device: device, publicKey: keyPair.publicKey, keyID: currentID, key: current))
                try server.putKeys(vault: vault, try deliveries(of: configuration.keyring, vault: vault, to: device, publicKey: keyPair.publicKey))
            }
        } else {
            try serverCall {
                try server.registerDevice(vault: vault, id: device, name: deviceName, publicKey: keyPair.publicKey, state: "pending", approval: nil)
            }
        }
        try keychain.resetSync()
        try configuration.save(to: keychain)
        try keychain.setSyncValues(["vault": vault, "device": device])
        let client = SyncClient(keychain: keychain, configuration: configuration)
        client.server = server
        return (client, VaultCrypto.joinCode(vault: vault, publicKey: keyPair.publicKey))
    }

    /// For a pending join: fetches the vault keys once an existing device approved this one. Returns
    /// whether it is joined now.
    package func completeJoin() throws(KeychainError) -> Bool {
        guard !configuration.isJoined else { return true }
        let server = try connection()
        let delivered = try serverCall { try server.keys(vault: configuration.vault, device: configuration.device) }
        guard !delivered.isEmpty else { return false }
        configuration.keyring = try Self.openChain(delivered, vault: configuration.vault, keyPair: configuration.keyPair, firstAuth: nil)
        try configuration.save(to: keychain)
        return true
    }

    /// The code this device shows while it waits for approval.
    package var joinCode: String { VaultCrypto.joinCode(vault: configuration.vault, publicKey: configuration.keyPair.publicKey) }

    /// When this device last completed a round (nil: never).
    package var lastSync: String? {
        get throws(KeychainError) { try keychain.syncValue("last-sync").map { String(decoding: $0, as: UTF8.self) } }
    }

    /// The vault's fingerprint (nil before the join completes).
    package var fingerprint: String? {
        configuration.keyring[1].map { VaultCrypto.fingerprint(vault: configuration.vault, firstKey: $0) }
    }

    /// Devices waiting for approval, with the code each shows.
    package func pendingDevices() throws(KeychainError) -> [(name: String, code: String)] {
        let server = try connection()
        return try serverCall { try server.devices(vault: configuration.vault) }
            .filter { $0.state == "pending" }
            .map { ($0.name, VaultCrypto.joinCode(vault: configuration.vault, publicKey: $0.publicKey)) }
    }

    /// Approves the pending device that shows `code`: hands it every vault key, sealed to its public key.
    /// errSecItemNotFound when no pending device shows that code.
    package func approve(code: String) throws(KeychainError) -> String {
        try requireJoined()
        let server = try connection()
        let vault = configuration.vault
        let wanted = code.filter(\.isNumber)
        guard let device = try serverCall({ try server.devices(vault: vault) }).first(where: {
            $0.state == "pending" && VaultCrypto.joinCode(vault: vault, publicKey: $0.publicKey).filter(\.isNumber) == wanted
        }) else {
            throw KeychainError(.itemNotFound, "no device waiting to join shows the code \(code)")
        }
        let currentID = configuration.keyring.currentID
        guard let current = configuration.keyring.current else { throw KeychainError(.internal, "a joined device has no vault key") }
        try serverCall {
            try server.connection.execute("BEGIN")
            try server.putKeys(vault: vault, try Self.deliveries(of: configuration.keyring, vault: vault, to: device.id, publicKey: device.publicKey))
            try server.setDevice(vault: vault, id: device.id, state: "active",
                                 approval: VaultCrypto.approval(vault: vault, device: device.id, publicKey: device.publicKey, keyID: currentID, key: current))
            try server.connection.execute("COMMIT")
        }
        return device.name
    }

    /// Removes a device from the vault and rotates the vault key: key n+1 goes to every remaining approved
    /// device and to the recovery code, never to the removed one, and every later row is sealed under it —
    /// the removed device cannot read anything written after its removal.
    package func removeDevice(named name: String) throws(KeychainError) {
        try requireJoined()
        let server = try connection()
        let vault = configuration.vault
        let devices = try serverCall { try server.devices(vault: vault) }
        guard let target = devices.first(where: { $0.name == name && ($0.state == "active" || $0.state == "pending") }) else {
            throw KeychainError(.itemNotFound, "the vault has no device named \(name)")
        }
        guard target.id != configuration.device else {
            throw KeychainError.param("this device cannot remove itself; remove it from another device, or leave with latchkey sync leave")
        }
        try refreshKeys()
        let previousID = configuration.keyring.currentID
        guard let previous = configuration.keyring.current else { throw KeychainError(.internal, "a joined device has no vault key") }
        let newID = previousID + 1
        let newKey = SecureBytes(randomCount: AEAD.keyLength)
        var deliveries: [(device: Data, keyID: Int32, sealed: Data)] = []
        var approvals: [(Data, Data)] = []
        for device in devices where device.id != target.id {
            switch device.state {
            case "active":
                // Only devices this vault approved get the new key (the server cannot slip one in).
                guard VaultCrypto.isApproved(device, vault: vault, keyring: configuration.keyring) else { continue }
                deliveries.append((device.id, newID, try VaultCrypto.deliver(newKey, id: newID, vault: vault, to: device.publicKey, authKey: previous)))
                approvals.append((device.id, VaultCrypto.approval(vault: vault, device: device.id, publicKey: device.publicKey, keyID: newID, key: newKey)))
            case "recovery":
                deliveries.append((device.id, newID, try VaultCrypto.deliver(newKey, id: newID, vault: vault, to: device.publicKey, authKey: previous)))
            default:
                continue
            }
        }
        try serverCall {
            try server.connection.execute("BEGIN")
            try server.setDevice(vault: vault, id: target.id, state: "removed", approval: nil)
            try server.connection.query("DELETE FROM latchkey.vault_keys WHERE vault = $1 AND device = $2", [.bytes(vault), .bytes(target.id)])
            try server.putKeys(vault: vault, deliveries)
            for (id, approval) in approvals {
                try server.connection.query("UPDATE latchkey.devices SET approval = $3 WHERE vault = $1 AND id = $2",
                                            [.bytes(vault), .bytes(id), .bytes(approval)])
            }
            try server.connection.execute("COMMIT")
        }
        configuration.keyring.insert(newKey, id: newID)
        try configuration.save(to: keychain)
    }

    /// Leaves the vault on this device: forgets the configuration and every sync record; items stay.
    package func leave() throws(KeychainError) {
        try Self.remove(configuration, from: keychain)
    }

    private static func remove(_ configuration: SyncConfiguration, from keychain: KeychainDatabase) throws(KeychainError) {
        try SyncConfiguration.remove(from: keychain)
        try keychain.resetSync()
    }

    // MARK: Syncing

    /// One round: fetch new vault keys, push local changes (compare-and-swap), pull the server's changes
    /// after the cursor, verify and apply them, and push again what the round produced (deletions of
    /// primary-key losers). `collectTombstonesOlderThan` (seconds) also collects tombstones on the server.
    @discardableResult
    package func sync(collectTombstonesOlderThan horizon: Int? = nil) throws(KeychainError) -> SyncReport {
        // A connection kept from an earlier round may have died with a server restart; libpq learns that
        // only when it is used. Such a round runs once more on a fresh connection.
        let reused = server != nil
        do throws(KeychainError) {
            return try round(collectTombstonesOlderThan: horizon)
        } catch {
            guard reused, error.status == .notAvailable, server == nil else { throw error }
            return try round(collectTombstonesOlderThan: horizon)
        }
    }

    private func round(collectTombstonesOlderThan horizon: Int?) throws(KeychainError) -> SyncReport {
        var report = SyncReport()
        guard try completeJoin() else {
            throw KeychainError(.interactionNotAllowed, "this device waits for approval: run latchkey sync approve \(joinCode) on a device of the vault")
        }
        let server = try connection()
        let state = try serverCall { try server.checkIn(vault: configuration.vault, device: configuration.device) }
        guard state == "active" else {
            throw KeychainError(.authFailed, state == nil ? "the server does not know this device" : "this device was removed from the vault")
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
        trace("round: push \(pushed - started), pull \(pulled - pushed), apply \(applied - pulled), push again \(clock.now - applied)")
        if let horizon {
            _ = try serverCall { try server.collectTombstones(vault: configuration.vault, horizonSeconds: horizon) }
        }
        try keychain.setSyncValues(["last-sync": Data(ISO8601DateFormatter().string(from: Date()).utf8)])
        return report
    }

    /// Pushes local changes in batches; returns whether the server refused any (a version moved on there).
    private func push(into report: inout SyncReport) throws(KeychainError) -> Bool {
        let server = try connection()
        guard let key = configuration.keyring.current else { return false }
        let keyID = configuration.keyring.currentID
        var refusedAny = false
        func send(_ batch: [SyncOutgoing]) throws(KeychainError) {
            let rows = batch.map { (VaultCrypto.seal($0.record, vault: configuration.vault, keyID: keyID, key: key, author: configuration.device), $0.expectedVersion) }
            let results = try serverCall { try server.push(vault: configuration.vault, device: configuration.device, rows) }
            var acknowledged: [(itemID: Data, version: Int64, deleted: Bool)] = []
            var refused: Set<Data> = []
            for (row, result) in zip(rows, results) {
                if result.sequence != nil {
                    acknowledged.append((row.0.itemID, row.0.version, row.0.deleted))
                } else {
                    refused.insert(row.0.itemID)
                }
            }
            trace("push \(rows.map { "\($0.0.itemID.hexString.prefix(6)) v\($0.0.version)/e\($0.1)" }) -> \(results.map { $0.sequence.map { "#\($0)" } ?? "refused@v\($0.serverVersion)" })")
            report.pushed += acknowledged.count
            try keychain.syncAcknowledge(acknowledged)
            if !refused.isEmpty { refusedAny = true }
        }
        // The items written since the last look, in id order, each looked at once per round (refused ones
        // stay marked and go again after the pull).
        var after: Data?
        var waiting = 0
        while true {
            let (batch, locked, last) = try keychain.syncOutgoing(after: after, limit: batchSize)
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
        let vault = configuration.vault
        var cursor = try keychain.syncCursor()
        var first = true
        var reading: (start: Int64, total: Int, done: Int)?
        while true {
            let (rows, collected, newest) = try serverCall { try server.pull(vault: vault, after: cursor, limit: batchSize * 4) }
            if first, cursor > newest {
                // The server's newest change is older than one this device pulled: it went back in time (restored
                // from a backup, or a standby promoted without the last commits). What it lost is pushed again.
                report.serverWentBack = true
                trace("server went back: cursor \(cursor) > newest \(newest)")
                let versions = try serverCall { try server.versions(vault: vault) }
                try keychain.syncRebase(onto: versions)
                _ = try push(into: &report)
                cursor = 0
                first = false
                continue
            }
            if first, cursor > 0, collected > cursor {
                // Tombstones this device had not seen are gone: read everything again and drop what vanished.
                report.fullResync = true
                let present = try serverCall { try server.itemIDs(vault: vault) }
                _ = try keychain.syncForgetMissing(present: present)
                cursor = 0
                first = false
                continue
            }
            first = false
            guard let last = rows.last else { break }
            if reading == nil { reading = (cursor, max(Int(newest - cursor), rows.count), 0) }
            trace("pull after \(cursor): \(rows.count) rows, #\(rows[0].sequence)…#\(last.sequence), newest \(newest)")
            // This device's own pushes coming back at the version it knows need no inbox: it wrote them.
            let known = try keychain.syncKnownVersions(rows.filter { $0.author == configuration.device }.map(\.itemID))
            let incoming = rows.filter { $0.author != configuration.device || known[$0.itemID]?.version != $0.version }
            try keychain.syncReceive(incoming, cursor: last.sequence)
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
        let key = keyring.current, keyID = keyring.currentID
        let sealer: SyncConflictSealer = { [configuration] record in
            guard let key else { return (0, Data()) }
            return (keyID, VaultCrypto.seal(record, vault: vault, keyID: keyID, key: key, author: configuration.device).ciphertext)
        }
        var after: Int64 = -1
        let waiting = try keychain.syncCounts().inbox
        var written = 0
        while true {
            let inbox = try keychain.syncInbox(limit: batchSize).filter { $0.sequence > after }
            guard let last = inbox.last else { break }
            if written == 0 { progress?(OperationProgress(.writing, completed: 0, total: waiting)) }
            defer {
                written += inbox.count
                progress?(OperationProgress(.writing, completed: min(written, waiting), total: waiting))
            }
            after = last.sequence
            let clock = ContinuousClock(), started = clock.now
            let known = try keychain.syncKnownVersions(inbox.map(\.itemID))
            let looked = clock.now
            let page = inbox.map { envelope -> (envelope: SyncEnvelope, action: SyncInboxAction) in
                (envelope, Self.action(for: envelope, known: known[envelope.itemID], vault: vault, keyring: keyring, device: configuration.device))
            }
            let opened = clock.now
            let outcomes = try keychain.syncProcess(page, sealer: sealer)
            trace("page of \(page.count): known \(looked - started), open \(opened - looked), write \(clock.now - opened)")
            for ((envelope, action), outcome) in zip(page, outcomes) {
                trace("inbox #\(envelope.sequence) \(envelope.itemID.hexString.prefix(6)) v\(envelope.version) by \(envelope.author.hexString.prefix(4)) known \(known[envelope.itemID].map { "v\($0.version)" } ?? "-"): \(Self.name(of: action)) \(outcome.map { "\($0)" } ?? "")")
            }
            for ((_, action), outcome) in zip(page, outcomes) {
                if case .reject = action { report.rejected += 1 }
                switch outcome {
                case .applied?: report.applied += 1
                case .appliedOverConflict?: report.applied += 1; report.conflicts += 1
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
    private static func action(for envelope: SyncEnvelope, known: (version: Int64, deleted: Bool)?, vault: Data, keyring: VaultKeyring,
                               device: Data) -> SyncInboxAction {
        if let known, envelope.version < known.version {
            return .reject("version \(envelope.version) is older than version \(known.version) this device has: replayed or rolled back")
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

    // MARK: Status and conflicts

    /// The vault's devices as the server lists them (removed ones included).
    package func devices() throws(KeychainError) -> [SyncDeviceStatus] {
        let server = try connection()
        return try serverCall { try server.devices(vault: configuration.vault) }.filter { $0.state != "recovery" }.map {
            SyncDeviceStatus(name: $0.name, state: $0.state, lastSeen: $0.lastSeen, isThisDevice: $0.id == configuration.device,
                             verified: VaultCrypto.isApproved($0, vault: configuration.vault, keyring: configuration.keyring))
        }
    }

    /// The conflict records, each opened (nil content when it cannot be: sealed under a key this device lacks).
    package func conflicts() throws(KeychainError) -> [(conflict: SyncConflict, record: SyncRecord?)] {
        try keychain.syncConflicts().map { conflict in
            (conflict, try? openConflict(conflict))  // A record this device cannot open is still listed, without content.
        }
    }

    /// Restores conflict `id` as a local change (pushed by the next round).
    package func restoreConflict(_ id: Int64) throws(KeychainError) {
        guard let conflict = try keychain.syncConflicts().first(where: { $0.id == id }) else {
            throw KeychainError(.itemNotFound, "there is no conflict \(id)")
        }
        try keychain.syncRestoreConflict(id, record: try openConflict(conflict))
    }

    private func openConflict(_ conflict: SyncConflict) throws(KeychainError) -> SyncRecord {
        // Conflict records are sealed as rows of this device with the item's version and a live flag.
        let envelope = SyncEnvelope(sequence: 0, itemID: conflict.itemID, version: conflict.version, deleted: false,
                                    keyID: conflict.keyID, ciphertext: conflict.sealed, author: configuration.device)
        do throws(KeychainError) {
            return try VaultCrypto.open(envelope, vault: configuration.vault, keyring: configuration.keyring)
        } catch {
            var deletion = envelope
            deletion.deleted = true
            return try VaultCrypto.open(deletion, vault: configuration.vault, keyring: configuration.keyring)
        }
    }

    // MARK: Helpers

    /// Fetches vault keys newer than this device holds (a rotation) and checks each is tagged by the one before.
    private func refreshKeys() throws(KeychainError) {
        let server = try connection()
        let held = configuration.keyring.currentID
        let delivered = try serverCall { try server.keys(vault: configuration.vault, device: configuration.device, after: held) }
        guard !delivered.isEmpty else { return }
        var keyring = configuration.keyring
        for (id, sealed) in delivered {
            guard let previous = keyring[id - 1] else { throw KeychainError(.authFailed, "vault key \(id) arrived without key \(id - 1)") }
            keyring.insert(try VaultCrypto.receive(sealed, id: id, vault: configuration.vault, keyPair: configuration.keyPair, authKey: previous), id: id)
        }
        configuration.keyring = keyring
        try configuration.save(to: keychain)
    }

    private static func openChain(_ delivered: [(keyID: Int32, sealed: Data)], vault: Data, keyPair: BoxKeyPair, firstAuth: SecureBytes?)
        throws(KeychainError) -> VaultKeyring
    {
        var keyring = VaultKeyring()
        for (id, sealed) in delivered.sorted(by: { $0.keyID < $1.keyID }) {
            let auth = id == 1 ? firstAuth : keyring[id - 1]
            guard id == 1 || auth != nil else { throw KeychainError(.authFailed, "vault key \(id) arrived without key \(id - 1)") }
            keyring.insert(try VaultCrypto.receive(sealed, id: id, vault: vault, keyPair: keyPair, authKey: auth), id: id)
        }
        return keyring
    }

    private static func deliveries(of keyring: VaultKeyring, vault: Data, to device: Data, publicKey: Data) throws(KeychainError)
        -> [(device: Data, keyID: Int32, sealed: Data)]
    {
        var deliveries: [(device: Data, keyID: Int32, sealed: Data)] = []
        for (id, key) in keyring.keys.sorted(by: { $0.key < $1.key }) {
            deliveries.append((device, id, try VaultCrypto.deliver(key, id: id, vault: vault, to: publicKey, authKey: keyring[id - 1])))
        }
        return deliveries
    }

    private func requireJoined() throws(KeychainError) {
        guard try completeJoin() else { throw KeychainError(.interactionNotAllowed, "this device waits for approval") }
    }

    private static func validate(deviceName: String) throws(KeychainError) {
        guard (1...200).contains(deviceName.count), !deviceName.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw KeychainError.param("a device name has 1 to 200 characters and no control character")
        }
    }

    /// The connection, made (and the schema migrated) when there is none or it broke.
    package func connection() throws(KeychainError) -> SyncServer {
        if let server, server.connection.isHealthy { return server }
        server = nil
        let made = try Self.connect(configuration.server)
        server = made
        return made
    }

    /// Drops the connection (the next call reconnects).
    package func disconnect() { server = nil }

    private static func connect(_ conninfo: String) throws(KeychainError) -> SyncServer {
        do throws(PostgresError) {
            return try SyncServer.connect(conninfo)
        } catch {
            throw error.keychainError
        }
    }

    /// Runs server calls, mapping PostgreSQL's errors to keychain errors (a removed device: errSecAuthFailed);
    /// a keychain error from inside passes through.
    private func serverCall<T>(_ body: () throws -> T) throws(KeychainError) -> T {
        do {
            return try body()
        } catch let error as PostgresError {
            if error.connectionLost {
                server = nil
            } else {
                _ = try? server?.connection.execute("ROLLBACK")  // Ends a transaction the failure left open; no-op otherwise.
            }
            if error.state == "LK001" { throw KeychainError(.authFailed, "this device was removed from the vault") }
            throw error.keychainError
        } catch {
            throw Self.keychainError(error)
        }
    }

    private static func serverCall<T>(_ body: () throws -> T) throws(KeychainError) -> T {
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
private let traceFile: FileHandle? = ProcessInfo.processInfo.environment["LATCHKEY_SYNC_TRACE"].flatMap { path in
    guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else { return nil }
    return FileHandle(forWritingAtPath: path)
}
private func trace(_ message: @autoclosure () -> String) {
    traceFile?.write(Data("sync: \(message())\n".utf8))
}

extension Data {
    /// Lowercase hex, for ids in messages.
    package var hexString: String { map { String(format: "%02x", $0) }.joined() }
}
