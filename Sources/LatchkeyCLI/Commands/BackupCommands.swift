import Foundation
import Latchkey

/// export and import: an encrypted backup of a keychain for moving it to another machine.
enum BackupCommands {
    static let backupPassphraseOptions = [
        OptionSpec(nil, "backup-passphrase-fd", .required, value: "fd",
                   "Read the backup's passphrase from this open file descriptor (one line)."),
    ]

    /// The backup's own passphrase: a file descriptor, LATCHKEY_BACKUP_PASSPHRASE, or a prompt (twice when
    /// exporting).
    static func backupPassphrase(_ arguments: ParsedArguments, context: CLIContext, confirm: Bool) throws -> Passphrase {
        if let fd = arguments.value("backup-passphrase-fd") {
            guard let descriptor = Int32(fd), descriptor >= 0 else {
                throw UsageError(message: "--backup-passphrase-fd needs a file descriptor number, not '\(fd)'")
            }
            return try PassphraseSource.fileDescriptor(descriptor).read()
        }
        if let value = context.environment["LATCHKEY_BACKUP_PASSPHRASE"] { return Passphrase(value) }
        let first = try context.prompt("passphrase for the backup: ")
        if confirm {
            guard try context.prompt("retype passphrase for the backup: ") == first else {
                throw CommandFailure(message: "the passphrases do not match")
            }
        }
        return Passphrase(bytes: first)
    }

    static let export = Command(
        "export", synopsis: "-o file [--include-this-device-only] [--backup-passphrase-fd fd] [keychain]",
        summary: "Write an encrypted backup of a keychain.",
        details: """
            Writes every item of the keychain, in every access group, to an encrypted backup file for moving it \
            to another machine. The backup has its own passphrase (asked for twice, or read from \
            --backup-passphrase-fd or LATCHKEY_BACKUP_PASSPHRASE), turned into a key with Argon2id; the items \
            are sealed with XChaCha20-Poly1305. Items whose accessibility is "this device only" stay behind \
            unless --include-this-device-only is given. The file is created with mode 0600 and never overwritten.
            """,
        options: [
            OptionSpec("o", "output", .required, value: "file", "The backup file to create."),
            OptionSpec(nil, "include-this-device-only", "Include items whose accessibility is \"this device only\"."),
        ] + backupPassphraseOptions + passphraseOptions
    ) { arguments, context in
        guard let output = arguments.value("output") else { throw UsageError(message: "-o file is required") }
        guard !FileManager.default.fileExists(atPath: output) else {
            throw CommandFailure(message: "\(output) already exists; choose a new file name")
        }
        let path = context.keychainPath(arguments.positionals.first)
        let keychain = try context.openUnlocked(path, displayName: arguments.positionals.first ?? "default", arguments: arguments)
        let caller = commandLineCaller(group: nil, environment: context.environment)
        var items: [KeychainBackup.Item] = []
        var leftBehind = 0
        for itemClass in ItemClass.stored {
            let found: [ItemResult]
            do throws(KeychainError) {
                found = try keychain.copyMatching(
                    ItemQuery(itemClass, synchronizable: .any, limit: .all, returning: [.attributes, .data]), caller: caller)
            } catch {
                guard error.status == .itemNotFound else { throw error }
                continue
            }
            for item in found {
                let accessibility = item[.accessible]?.stringValue.flatMap(Accessibility.init(rawValue:))
                if accessibility?.isThisDeviceOnly == true && !arguments.has("include-this-device-only") {
                    leftBehind += 1
                    continue
                }
                items.append(KeychainBackup.Item(itemClass: item.itemClass, attributes: item.attributes, data: item.data))
            }
        }
        let backup = try KeychainBackup.seal(items, passphrase: backupPassphrase(arguments, context: context, confirm: true))
        guard FileManager.default.createFile(atPath: output, contents: backup, attributes: [.posixPermissions: 0o600]) else {
            throw CommandFailure(message: "cannot create \(output)")
        }
        context.stderr.line("exported \(items.count) items to \(output)"
            + (leftBehind > 0 ? "; left \(leftBehind) this-device-only items behind (--include-this-device-only takes them)" : ""))
        return 0
    }

    static let import_ = Command(
        "import", synopsis: "-i file [--on-conflict skip|replace|newer] [--backup-passphrase-fd fd] [keychain]",
        summary: "Restore items from an encrypted backup.",
        details: """
            Reads a backup written by `latchkey export` and adds its items to the keychain, in one transaction: \
            all of them or, on any error, none. An item whose primary key is already taken is skipped (the \
            default), replaces the existing one (--on-conflict replace), or replaces it only when the backup's \
            copy was modified later (--on-conflict newer). It reports how many items it added, updated and \
            skipped. A wrong backup passphrase or a damaged backup changes nothing.
            """,
        options: [
            OptionSpec("i", "input", .required, value: "file", "The backup file to read."),
            OptionSpec(nil, "on-conflict", .required, value: "policy", "skip (the default), replace, or newer."),
        ] + backupPassphraseOptions + passphraseOptions
    ) { arguments, context in
        guard let input = arguments.value("input") else { throw UsageError(message: "-i file is required") }
        let policyName = arguments.value("on-conflict") ?? "skip"
        guard let policy = ConflictPolicy(rawValue: policyName) else {
            throw UsageError(message: "--on-conflict takes skip, replace or newer, not '\(policyName)'")
        }
        guard let backup = FileManager.default.contents(atPath: input) else {
            throw CommandFailure(message: "cannot read \(input)")
        }
        let items = try KeychainBackup.open(backup, passphrase: backupPassphrase(arguments, context: context, confirm: false))
        let path = context.keychainPath(arguments.positionals.first)
        let keychain = try context.openUnlocked(path, displayName: arguments.positionals.first ?? "default", arguments: arguments)
        let summary = try keychain.restore(items, onConflict: policy,
                                           caller: commandLineCaller(group: nil, environment: context.environment))
        context.stdout.line("added \(summary.added), updated \(summary.updated), skipped \(summary.skipped)")
        return 0
    }
}
