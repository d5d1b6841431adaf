import FoundationEssentials
import Latchkey
import LatchkeyCrypto
import LatchkeyPOSIX

/// export and import: an encrypted backup of a keychain for moving it to another machine.
enum BackupCommands {
    static let backupPassphraseOptions = [
        OptionSpec(
            .backupPassphraseFD, .required, value: "fd",
            "Read the backup's passphrase from this open file descriptor (one line).")
    ]

    /// The backup's own passphrase: a file descriptor, LATCHKEY_BACKUP_PASSPHRASE, or a prompt (twice when
    /// exporting).
    static func backupPassphrase(_ arguments: ParsedArguments, context: CLIContext, confirm: Bool) throws -> Passphrase
    {
        if let fd = arguments.value(.backupPassphraseFD) {
            guard let descriptor = Int32(fd), descriptor >= 0 else {
                throw UsageError(message: "--backup-passphrase-fd needs a file descriptor number, not '\(fd)'")
            }
            return try PassphraseSource.fileDescriptor(descriptor).read()
        }
        if let value = context.environment["LATCHKEY_BACKUP_PASSPHRASE"] { return Passphrase(value) }
        let alternatives = "--backup-passphrase-fd or LATCHKEY_BACKUP_PASSPHRASE for the backup's own passphrase"
        let first = try context.prompt("passphrase for the backup: ", alternatives: alternatives)
        if confirm {
            guard try context.prompt("retype passphrase for the backup: ", alternatives: alternatives) == first else {
                throw CommandFailure(message: "the passphrases do not match")
            }
        }
        return Passphrase(bytes: first)
    }

    /// What the progress meter calls each stored class.
    static let classNames: [ItemClass: String] = [
        .genericPassword: "generic passwords", .internetPassword: "internet passwords", .certificate: "certificates",
        .key: "keys",
    ]

    /// Creates `path` with `contents`: written under a temporary name created 0600 with O_EXCL|O_NOFOLLOW,
    /// synced, then hard-linked to `path`, which fails if anything is there (a file someone created meanwhile
    /// is never replaced, and a kill at any moment leaves at most a private temporary file).
    static func writeNew(_ path: String, contents: Data) throws {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let temporary =
            directory + "/." + url.lastPathComponent + ".writing-\(CurrentProcess.id)-"
            + Hex.encode((0..<6).map { _ in UInt8.random(in: 0...255) })
        do {
            try Files.createExclusive(temporary, contents: [UInt8](contents))
        } catch {
            throw KeychainError(error == .noSpace ? .diskFull : .io, "cannot create \(temporary): \(error)")
        }
        defer { try? Files.remove(temporary) }  // Linked or not, the temporary name goes; a leftover is 0600.
        do {
            try Files.link(temporary, to: path)
        } catch {
            if error == .fileExists { throw CommandFailure(message: "\(path) already exists; choose a new file name") }
            throw KeychainError(.io, "cannot create \(path): \(error)")
        }
        Files.syncDirectory(directory)
    }

    static let export = Command(
        "export",
        synopsis:
            "-o file [--include-this-device-only] [--backup-passphrase-fd fd] [keychain] | -t type [-f format] [-P passphrase] [-o file] [-k keychain] | --to-secret-service [bus-name] [-k keychain] | --to kdbx|gnome-keyring -o file [--kdf-memory MiB] [--kdf-passes count] [--file-passphrase-fd fd] [--include-this-device-only] [-k keychain]",
        summary:
            "Write an encrypted backup of a keychain, export certificates or an identity, or write its passwords for another program.",
        details: """
            With -t, exports as `security` does: -t certs writes every certificate as PEM (-f pemseq, the \
            default) or the only one as DER (-f x509); -t identities writes the keychain's identity — its \
            certificate, private key and the other certificates as its chain — as a PKCS #12 file (-f pkcs12) \
            encrypted with -P's passphrase (AES-256 with PBKDF2); -t pubKeys writes every public key as PEM and \
            -t allKeys adds the private keys as encrypted PKCS #8 PEM under -P's passphrase; all to -o's file or \
            standard output. \
            Without -t, it writes every item of the keychain, in every access group, to an encrypted backup file for moving it \
            to another machine. The backup has its own passphrase (asked for twice, or read from \
            --backup-passphrase-fd or LATCHKEY_BACKUP_PASSPHRASE), turned into a key with Argon2id; the items \
            are sealed with XChaCha20-Poly1305. Items whose accessibility is "this device only" stay behind \
            unless --include-this-device-only is given. The file is written under a temporary name created \
            with mode 0600, synced, then linked to its name: it never exists half-written or readable by \
            others, and an existing file is never replaced. On a terminal, standard error shows how many items \
            have been read, the rate and the time left. \
            With --to-secret-service, copies every Secret Service item of the keychain into the default \
            collection of the provider on the session bus (GNOME Keyring, back from `import --from-secret-service`), \
            skipping those it already has; it exits with 1 when that collection is locked. \
            With --to, writes the keychain's passwords (internet and generic, in every access group) to -o's new \
            file, encrypted under the file's own password (from --file-passphrase-fd, LATCHKEY_FILE_PASSPHRASE or \
            asked for twice): --to kdbx a KeePass database (KDBX 4, AES-256, Argon2d with --kdf-memory MiB and \
            --kdf-passes iterations, by default KeePassXC's 64 and 10) that KeePassXC opens, each label's path as \
            groups and title, the account as user name, the comment as notes, free-form attributes as custom \
            fields, and a secret that is not text as the attachment latchkey-secret.bin; --to gnome-keyring a \
            keyring file that gnome-keyring-daemon unlocks with that password (saved as \
            ~/.local/share/keyrings/login.keyring with the login password, it is the login keyring), Secret \
            Service items as they were and the others under GNOME Keyring's network-password or generic schema. \
            It prints how many items it wrote of each class, and what it left behind: certificates and keys, \
            which these files do not hold, and this-device-only items unless --include-this-device-only is given.
            """,
        options: [
            OptionSpec(.output, .required, value: "file", "The backup file to create."),
            OptionSpec(.includeThisDeviceOnly, "Include items whose accessibility is \"this device only\"."),
            OptionSpec(
                .toSecretService,
                "Copy the keychain's Secret Service items into the default collection of another provider on the session bus (the positional argument names its bus name, org.freedesktop.secrets by default)."
            ),
        ] + FormatExport.options + [FormatImport.filePassphraseOption] + PKITransfer.exportOptions
            + backupPassphraseOptions + passphraseOptions
    ) { arguments, context in
        if arguments.has(.toFormat) { return try FormatExport.run(arguments, context: context) }
        if arguments.has(.toSecretService) { return try SecretServiceExport.run(arguments, context: context) }
        if PKITransfer.isPKIExport(arguments) { return try PKITransfer.runExport(arguments, context: context) }
        guard let output = arguments.value(.output) else { throw UsageError(message: "-o file is required") }
        guard FileStatus.of(path: output) == nil else {
            throw CommandFailure(message: "\(output) already exists; choose a new file name")
        }
        let path = context.keychainPath(arguments.positionals.first)
        let (keychain, confirmation) = try context.openUnlockedConfirming(
            path, displayName: context.keychainName(arguments.positionals.first),
            arguments: arguments)
        let caller = commandLineCaller(group: nil, environment: context.environment)
        var items: [KeychainBackup.Item] = []
        // Items' access lists go with them (a backup of format 2), by item id.
        let accessLists = try keychain.allAccessLists()
        var leftBehind = 0
        var heldLeftBehind = 0
        for itemClass in ItemClass.stored {
            let found: [ItemResult]
            do throws(KeychainError) {
                found = try context.withProgress("exporting " + classNames[itemClass, default: itemClass.rawValue]) {
                    progress throws(KeychainError) in
                    try keychain.copyMatching(
                        ItemQuery(
                            itemClass, synchronizable: .any, limit: .all,
                            returning: [.attributes, .data, .persistentReference]),
                        caller: caller,
                        presence: confirmation, progress: progress)
                }
            } catch {
                guard error.status == .itemNotFound else { throw error }
                continue
            }
            for item in found {
                if item[.tokenID] != nil {
                    heldLeftBehind += 1  // A key the keychain holds never leaves it, not even in a backup.
                    continue
                }
                let accessibility = item[.accessible]?.stringValue.flatMap(Accessibility.init(rawValue:))
                if accessibility?.isThisDeviceOnly == true && !arguments.has(.includeThisDeviceOnly) {
                    leftBehind += 1
                    continue
                }
                let id = PersistentReference.parse(item.persistentReference)?.id
                items.append(
                    KeychainBackup.Item(
                        itemClass: item.itemClass, attributes: item.attributes, data: item.data,
                        accessList: id.flatMap { accessLists[$0] } ?? []))
            }
        }
        var backup = try KeychainBackup.seal(
            items, passphrase: backupPassphrase(arguments, context: context, confirm: true))
        defer { wipe(&backup) }
        try writeNew(output, contents: backup)
        context.stderr.line(
            "exported \(items.count) items to \(output)"
                + (leftBehind > 0
                    ? "; left \(leftBehind) this-device-only items behind (--include-this-device-only takes them)" : "")
                + (heldLeftBehind > 0
                    ? "; left \(heldLeftBehind) key\(heldLeftBehind == 1 ? "" : "s") the keychain holds behind (they never leave it)"
                    : ""))
        return 0
    }

    static let import_ = Command(
        "import",
        synopsis:
            "-i file [--on-conflict skip|replace|newer] [--backup-passphrase-fd fd] [keychain] | file [-k keychain] [-f format] [-P passphrase] | --from-secret-service [bus-name] [-k keychain] | --from format [file] [--dry-run] [--key-file path] [--file-passphrase-fd fd] [-k keychain]",
        summary:
            "Restore items from an encrypted backup, import certificates or a PKCS #12 identity, or import another program's passwords.",
        details: """
            With a file and no -i, imports as `security` does: certificates (PEM, every block, or DER), PEM keys \
            (public, private, or encrypted private with -P), or a \
            PKCS #12 file (-P its passphrase; files from older tools with RC2 or Triple DES open too), whose \
            identity is stored as its certificate and its private key and whose other certificates are added \
            beside it, into the keychain of -k (else the default one). It prints how many identities, \
            certificates and keys it imported and how many were already there. A wrong passphrase exits with 51 and \
            a damaged file with 93, adding nothing. \
            With -i, reads a backup written by `latchkey export` and adds its items to the keychain, in one transaction: \
            all of them or, on any error, none. An item whose primary key is already taken is skipped (the \
            default), replaces the existing one (--on-conflict replace), or replaces it only when the backup's \
            copy was modified later (--on-conflict newer). It reports how many items it added, updated and \
            skipped. A wrong backup passphrase or a damaged backup changes nothing. A backup that asks for a \
            costlier key derivation than the keychain's own (or the default, if that is more) is refused unless \
            --allow-expensive-kdf is given or the question on the terminal is answered yes: a crafted file could \
            otherwise tie up gigabytes of memory for minutes. On a terminal, standard error shows how many items \
            have been prepared and written, the rate and the time left. \
            With --from, reads another program's file without that program running and adds its passwords to the \
            keychain of -k: --from gnome-keyring reads GNOME Keyring's keyring files (the file named, every \
            .keyring file of the directory named, or of ~/.local/share/keyrings), each with its password, and \
            stores their items as `import --from-secret-service` does; --from kdbx reads a KeePass database \
            (KDBX 4 or 3.1, as KeePassXC writes them) with its password, --key-file, or both, leaving out the \
            recycle bin and reporting attachments; --from pass reads a pass store (the directory named, else \
            PASSWORD_STORE_DIR, else ~/.password-store), decrypting each entry with gpg as pass does, its first \
            line the password and the rest the notes; --from csv reads a password export of Firefox, Chromium or \
            Bitwarden, told apart by its first row. A KeePass database whose key derivation costs more than 1 GiB \
            of memory, 1,000 Argon2 iterations, 16 GiB over all iterations or 100 million AES-KDF rounds is \
            refused unless --allow-expensive-kdf is given. An entry with a URL becomes an internet \
            password (server, protocol, port and path from the URL, the user name as the account), one without \
            a generic password; the label is the entry's groups and title as a path, the notes the comment, other \
            fields free-form attributes. The file's password comes from --file-passphrase-fd, \
            LATCHKEY_FILE_PASSPHRASE or a prompt. The whole file is read and decrypted before the keychain is \
            touched: a wrong password (or gpg unable to decrypt) exits with 51 and a damaged file with 93, adding \
            nothing. The import prints \
            how many items it added of each class, how many the keychain had already, and how many entries it \
            skipped and why (another item has the same primary key, a row that is not an entry); run twice, the \
            second run adds nothing. --dry-run prints the same without changing the keychain.
            """,
        options: [
            OptionSpec(.input, .required, value: "file", "The backup file to read."),
            OptionSpec(.onConflict, .required, value: "policy", "skip (the default), replace, or newer."),
            OptionSpec(
                .allowExpensiveKDF,
                "Derive the backup's key even when it asks for more memory or passes than the keychain's own, or a KeePass database's beyond the limits above."
            ),
            OptionSpec(
                .fromSecretService,
                "Copy every item of another Secret Service provider on the session bus (GNOME Keyring, KeePassXC, KWallet; the positional argument names its bus name, org.freedesktop.secrets by default) into the keychain of -k."
            ),
        ] + FormatImport.options + PKITransfer.importOptions + backupPassphraseOptions + passphraseOptions
    ) { arguments, context in
        if arguments.has(.fromFormat) { return try FormatImport.run(arguments, context: context) }
        if arguments.has(.fromSecretService) { return try SecretServiceImport.run(arguments, context: context) }
        if PKITransfer.isPKIImport(arguments) { return try PKITransfer.runImport(arguments, context: context) }
        guard let input = arguments.value(.input) else { throw UsageError(message: "-i file is required") }
        let policyName = arguments.value(.onConflict) ?? "skip"
        guard let policy = ConflictPolicy(rawValue: policyName) else {
            throw UsageError(message: "--on-conflict takes skip, replace or newer, not '\(policyName)'")
        }
        let backup = try readBackup(input)
        let path = context.keychainPath(arguments.positionals.first)
        let keychain = try KeychainDatabase.open(at: path)
        try checkCost(of: backup, against: keychain, arguments: arguments, context: context)
        let items = try KeychainBackup.open(
            backup, passphrase: backupPassphrase(arguments, context: context, confirm: false))
        try keychain.unlock(
            with: context.passphrase(
                arguments, prompt: "password to unlock \(context.keychainName(arguments.positionals.first)): "))
        let caller = commandLineCaller(group: nil, environment: context.environment)
        let summary = try context.withProgress("importing") { progress in
            try keychain.restore(items, onConflict: policy, caller: caller, progress: progress)
        }
        context.stdout.line("added \(summary.added), updated \(summary.updated), skipped \(summary.skipped)")
        return 0
    }

    /// The backup file's bytes: a regular file no larger than a backup can be, checked before reading.
    static func readBackup(_ path: String) throws -> Data {
        do {
            return Data(try Files.read(path, limit: KeychainBackup.maximumBytes))
        } catch {
            switch error {
            case .tooLarge(let size):
                throw KeychainError.param(
                    "\(path) has \(size) bytes; a backup has at most \(KeychainBackup.maximumBytes >> 30) GiB")
            case .notRegularFile: throw KeychainError.param("\(path) is not a regular file")
            case .system(let failure): throw CommandFailure(message: "cannot read \(path): \(failure)")
            }
        }
    }

    /// Refuses, unless confirmed, a backup whose key derivation costs more memory or passes than the larger
    /// of the keychain's own and the default.
    static func checkCost(
        of backup: Data, against keychain: KeychainDatabase, arguments: ParsedArguments, context: CLIContext
    ) throws {
        let asked = try KeychainBackup.keyDerivation(of: backup)
        let own = try keychain.keyDerivation
        let memory = max(own.memoryBytes, KeyDerivation.default.memoryBytes)
        let passes = max(own.passes, KeyDerivation.default.passes)
        guard asked.memoryBytes > memory || asked.passes > passes, !arguments.has(.allowExpensiveKDF) else { return }
        let question = "the backup asks for a key derivation of \(asked), more than this keychain's \(own)"
        if context.interactive,
            let answer = Terminal.readAnswer(prompt: "latchkey: import: \(question). Derive it anyway? [y/N] "),
            ["y", "yes"].contains(answer.lowercased())
        {
            return
        }
        throw KeychainError.param("\(question); pass --allow-expensive-kdf to derive it anyway")
    }
}
