import FoundationEssentials
import Latchkey
import LatchkeyCrypto
import LatchkeySSH

/// `latchkey backup restore --at time [--item ref]`: the keychain, or one item, as a snapshot holds it.
enum SnapshotRestore {
    static func run(_ arguments: ParsedArguments, directory: String, path: String, context: CLIContext) throws -> Int32
    {
        guard let text = arguments.value(.at) else { throw UsageError(message: "backup restore needs --at time") }
        guard let time = SnapshotTime.parse(text, now: Date()) else {
            throw UsageError(
                message:
                    "--at takes a UTC time such as 2026-12-05T13:40:02Z or 2026-12-05, or a span ago such as 12h or 1d, not '\(text)'"
            )
        }
        let keychain = try KeychainDatabase.open(at: path)
        let listing = try SnapshotDirectory.listIfPresent(directory, keychainID: try keychain.keychainID)
        guard let chosen = SnapshotDirectory.latest(in: listing, atOrBefore: time) else {
            throw KeychainError(
                .itemNotFound,
                "no snapshot of this keychain in \(directory) was taken at or before \(SnapshotTime.iso(time))"
                    + (listing.snapshots.first.map { "; the oldest is of \(SnapshotTime.iso($0.taken))" } ?? ""))
        }
        let given = try context.unlock(
            keychain, arguments: arguments,
            prompt: "password to unlock \(context.keychainName(arguments.value(.keychain))): "
        )
        let copy = try SnapshotCopy(chosen.path, environment: context.environment)
        defer { copy.close() }
        let when = SnapshotTime.iso(copy.snapshot.taken)
        let presence = try unlock(copy, given: given, arguments: arguments, context: context, when: when)
        let held = try SnapshotCommands.items(
            of: copy.keychain, returning: [.attributes, .data, .persistentReference], context: context,
            presence: presence
        ).filter { $0[.tokenID] == nil }  // A key the keychain holds is never copied out of it.
        let caller = commandLineCaller(group: nil, environment: context.environment)
        if let ref = arguments.value(.item) {
            let item = try SnapshotCommands.resolve(ref, among: held, where: "the snapshot of \(when)")
            let summary = try keychain.restoreVersions([version(item)], caller: caller)
            context.stdout.line(
                "restored \(item.itemClass.rawValue) item \(Hex.encode(item.persistentReference)) to its version of \(when)"
                    + (summary.added > 0 ? " (it had been deleted: it has a new reference)" : ""))
            return 0
        }
        // What changed since the snapshot, by the change feed; a feed behind the snapshot's (a keychain file
        // put back from elsewhere) cannot say, and then every item is compared.
        let changed = try changedItems(after: copy.snapshot.sequence, in: keychain)
        let inSnapshot = Set(held.compactMap { PersistentReference.parse($0.persistentReference)?.id })
        let live = try SnapshotCommands.items(
            of: keychain, returning: [.attributes, .persistentReference], context: context, presence: nil
        ).filter { $0[.tokenID] == nil }  // A key the keychain holds cannot come back from a snapshot: it stays.
        // The SSH key store's records describe keys the keychain holds, which a snapshot does not bring back:
        // they stay with their keys (a key's confirmation setting is never dropped or rolled back).
        let own = { (item: ItemResult) in item[.accessGroup]?.stringValue != SSHKeyStore.accessGroup }
        let restoring = held.filter(own).filter { item in
            changed.map { $0.contains(PersistentReference.parse(item.persistentReference)?.id ?? Data()) } ?? true
        }
        let removing = live.filter(own).filter { item in
            guard let id = PersistentReference.parse(item.persistentReference)?.id, !inSnapshot.contains(id) else {
                return false
            }
            return changed?.contains(id) ?? true
        }
        guard !restoring.isEmpty || !removing.isEmpty else {
            context.stdout.line("the keychain is as it was at \(when): nothing to restore")
            return 0
        }
        let before = try keychain.takeSnapshot(into: directory, keep: Int.max)
        let summary = try keychain.restoreVersions(
            restoring.map(version), removing: removing.map(\.persistentReference), caller: caller)
        context.stdout.line(
            "restored the keychain to \(when): updated \(summary.updated), added \(summary.added), removed \(summary.removed); as it was before: \(before.path)"
        )
        return 0
    }

    /// Unlocks the snapshot's keychain: with --snapshot-passphrase-fd or LATCHKEY_SNAPSHOT_PASSPHRASE, else
    /// the keychain's passphrase (`given`; nil when the keychain opened unattended, and then unattended too),
    /// and when that is not the one of the snapshot's time, with the one the terminal is asked for. Returns
    /// the confirmation protected items are read with.
    static func unlock(
        _ copy: SnapshotCopy, given: Passphrase?, arguments: ParsedArguments, context: CLIContext, when: String
    ) throws -> any UserPresenceVerifier {
        var chosen = given
        var ownSource = false
        if let fd = arguments.value(.snapshotPassphraseFD) {
            guard let descriptor = Int32(fd), descriptor >= 0 else {
                throw UsageError(message: "--snapshot-passphrase-fd needs a file descriptor number, not '\(fd)'")
            }
            chosen = try PassphraseSource.fileDescriptor(descriptor).read()
            ownSource = true
        } else if let value = context.environment["LATCHKEY_SNAPSHOT_PASSPHRASE"] {
            chosen = Passphrase(value)
            ownSource = true
        }
        do throws(KeychainError) {
            if let chosen { try copy.keychain.unlock(with: chosen) } else { try copy.keychain.unlockUnattended() }
            return chosen.map { UnlockPassphraseConfirmation(passphrase: $0) } ?? TerminalPresence()
        } catch {
            guard error.status == .authFailed else { throw error }
            guard !ownSource else {
                throw KeychainError(.authFailed, "the passphrase given for the snapshot of \(when) does not open it")
            }
        }
        // The passphrase changed since the snapshot: ask for the one of that time, on the terminal if there is one.
        var typed: [UInt8]
        do {
            typed = try context.prompt(
                "password of the keychain at \(when): ",
                alternatives: "--snapshot-passphrase-fd or LATCHKEY_SNAPSHOT_PASSPHRASE")
        } catch let error as KeychainError where error.status == .interactionNotAllowed {
            throw KeychainError(
                .authFailed,
                "the snapshot of \(when) opens with the keychain's passphrase of that time, which is not the keychain's now; give it with --snapshot-passphrase-fd or LATCHKEY_SNAPSHOT_PASSPHRASE"
            )
        }
        defer { wipe(&typed) }
        let then = Passphrase(bytes: typed)
        try copy.keychain.unlock(with: then)
        return UnlockPassphraseConfirmation(passphrase: then)
    }

    static func version(_ item: ItemResult) -> SnapshotItem {
        SnapshotItem(
            item: KeychainBackup.Item(itemClass: item.itemClass, attributes: item.attributes, data: item.data),
            reference: item.persistentReference)
    }

    /// The ids of the items changed after `sequence`, or nil when the feed is behind it.
    static func changedItems(after sequence: Int64, in keychain: KeychainDatabase) throws -> Set<Data>? {
        guard try keychain.lastChangeSequence >= sequence else { return nil }
        var ids = Set<Data>()
        var after = sequence
        while true {
            let page = try keychain.changes(after: after, limit: 10_000)
            guard let last = page.last else { break }
            for change in page { ids.insert(change.itemID) }
            after = last.sequence
        }
        return ids
    }
}
