import FoundationEssentials
import Latchkey
import LatchkeyCrypto
import LatchkeyPOSIX

/// `latchkey backup now|list|restore`: the versioned snapshots `latchkeyd --backup-directory` keeps
/// (docs/BACKUPS.md).
enum SnapshotCommands {
    static let actions = ["now", "list", "restore"]
    static let defaultKeep = 14

    static let command = Command(
        "backup",
        synopsis:
            "now|list|restore [--directory dir] [--keep count] [--at time] [--item ref] [--verify] [--snapshot-passphrase-fd fd] [-k keychain]",
        summary: "Take, list and restore the versioned snapshots of a keychain that latchkeyd keeps.",
        details: """
            latchkeyd --backup-directory keeps snapshots of its keychain on a schedule; these actions use the \
            same directory: --directory, else LATCHKEY_BACKUP_DIRECTORY, else the one ~/.config/latchkey/latchkeyd.env \
            gives the agent, else $XDG_STATE_HOME/latchkey/backups (~/.local/state/latchkey/backups); a leading ~/ \
            is the home directory. A snapshot is a copy of the keychain's database taken in one \
            read transaction while writers go on, so it is the keychain at one moment; its items stay \
            encrypted as in the keychain and open only with the keychain's passphrase of that time, and a \
            digest ends the file, so a damaged snapshot is found and never restored. \
            `backup now` takes one (no passphrase needed) and removes the oldest beyond --keep (14 by \
            default). \
            `backup list` prints one line per snapshot of the keychain, oldest first: its time (UTC), the \
            change it holds the keychain up to, its number of items and its file; --verify reads each whole \
            and adds ok or damaged. With --item, it lists that item's versions from the change feed and which \
            version each snapshot holds. \
            `backup restore --at time` brings the keychain back to the newest snapshot taken at or before the \
            time: items changed since get the snapshot's version, items deleted since come back and items \
            added since are removed, after a snapshot of the keychain as it was is taken; with --item, only \
            that item gets its version of that time and no other item is touched. Keys the keychain holds (SSH \
            and TPM keys) and the SSH key store's records of them stay as they are. The keychain's passphrase \
            opens the snapshot too, unless --snapshot-passphrase-fd or LATCHKEY_SNAPSHOT_PASSPHRASE gives the one \
            it had then, or the terminal is asked for it. The time is UTC, as \
            2026-12-05T13:40:02Z, 2026-12-05T13:40Z, with an offset such as +01:00 instead of Z, a date \
            (its end), or a span ago: 90m, 12h, 1d, 2w. \
            An item ref is the item's persistent reference in hex (as `doctor` prints it), or the label, the \
            service (generic passwords) or the server (internet passwords) of exactly one item: with restore, of \
            the snapshot; with list, of the keychain, or of its newest snapshot for an item deleted since. \
            A damaged snapshot exits with 93, no snapshot at the time or no such item with 44, a wrong \
            passphrase with 51, an item whose primary key another item took meanwhile with 45, and a directory that cannot be written with 220.
            """,
        options: [
            OptionSpec(.snapshotDirectory, .required, value: "dir", "The directory of the snapshots."),
            OptionSpec(.keep, .required, value: "count", "With now: how many snapshots to keep (default 14)."),
            OptionSpec(.at, .required, value: "time", "With restore: the time to go back to."),
            OptionSpec(.item, .required, value: "ref", "With list or restore: only this item."),
            OptionSpec(.verify, "With list: read each snapshot whole and check its digest."),
            OptionSpec(
                .snapshotPassphraseFD, .required, value: "fd",
                "With restore: read the keychain's passphrase of the snapshot's time from this file descriptor (one line), when it has changed since."
            ),
            OptionSpec(.keychain, .required, value: "keychain", "The keychain (default: the default keychain)."),
        ] + passphraseOptions,
        positionals: 1...1
    ) { arguments, context in
        let action = arguments.positionals[0]
        guard actions.contains(action) else {
            throw UsageError(message: "unknown backup action '\(action)'; one of: \(actions.joined(separator: ", "))")
        }
        let directory =
            arguments.value(.snapshotDirectory).map { SnapshotDirectory.resolve($0, environment: context.environment) }
            ?? SnapshotDirectory.defaultPath(environment: context.environment, configured: agentsDirectory(context))
        let path = context.keychainPath(arguments.value(.keychain))
        switch action {
        case "now":
            let keep = try arguments.value(.keep).map { text -> Int in
                guard let count = Int(text), count >= 1, count <= 100_000 else {
                    throw UsageError(message: "--keep needs a number of snapshots from 1 to 100000, not '\(text)'")
                }
                return count
            }
            let keychain = try KeychainDatabase.open(at: path)
            let snapshot = try keychain.takeSnapshot(into: directory, keep: keep ?? defaultKeep)
            context.stdout.line(line(snapshot))
            return 0
        case "list":
            return try SnapshotListing.run(arguments, directory: directory, path: path, context: context)
        default:
            return try SnapshotRestore.run(arguments, directory: directory, path: path, context: context)
        }
    }

    /// The directory latchkeyd.env gives the agent (LATCHKEY_BACKUP_DIRECTORY), so a command run from a
    /// shell, which does not have that file's variables, finds the snapshots the service takes.
    static func agentsDirectory(_ context: CLIContext) -> String? {
        let path = DesktopPaths(environment: context.environment).agentEnvironment
        guard let bytes = try? Files.read(path, limit: 1 << 16) else { return nil }  // No file: nothing configured.
        return KeyValueFile(text: String(decoding: bytes, as: UTF8.self)).value(
            nil, SnapshotDirectory.environmentVariable)
    }

    /// `2026-12-05T13:40:02Z  change 12  items 3  /path/login.20261205T134002.123Z.lksnapshot`.
    static func line(_ snapshot: KeychainSnapshot) -> String {
        "\(SnapshotTime.iso(snapshot.taken))  change \(snapshot.sequence)  items \(snapshot.itemCount)  \(snapshot.path)"
    }

    /// The live items (attributes and persistent references, no secrets) of `keychain`, every class.
    static func items(
        of keychain: KeychainDatabase, returning: ReturnOptions, context: CLIContext,
        presence: (any UserPresenceVerifier)?
    ) throws -> [ItemResult] {
        let caller = commandLineCaller(group: nil, environment: context.environment)
        var found: [ItemResult] = []
        for itemClass in ItemClass.stored {
            do throws(KeychainError) {
                found += try keychain.copyMatching(
                    ItemQuery(itemClass, synchronizable: .any, limit: .all, returning: returning), caller: caller,
                    presence: presence)
            } catch {
                guard error.status == .itemNotFound else { throw error }
            }
        }
        return found
    }

    /// The one item of `items` that `ref` names: its persistent reference in hex, or its label, service or
    /// server. `errSecItemNotFound` when none does; `errSecParam` when several do.
    static func resolve(_ ref: String, among items: [ItemResult], where place: String) throws(KeychainError)
        -> ItemResult
    {
        if let reference = Hex.decode(ref), reference.count == 32 {
            guard let item = items.first(where: { $0.persistentReference == Data(reference) }) else {
                throw KeychainError(.itemNotFound, "\(place) has no item with the reference \(ref)")
            }
            return item
        }
        let named = items.filter { item in
            [AttributeKey.label, .service, .server].contains { item[$0]?.stringValue == ref }
        }
        guard named.count <= 1 else {
            throw KeychainError.param(
                "\(named.count) items of \(place) are named \(ref); give one's persistent reference: "
                    + named.map { Hex.encode($0.persistentReference) }.sorted().joined(separator: ", "))
        }
        guard let item = named.first else {
            throw KeychainError(.itemNotFound, "\(place) has no item named \(ref) (label, service or server)")
        }
        return item
    }
}
