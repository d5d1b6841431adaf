import FoundationEssentials
import Latchkey
import LatchkeyFormats
import LatchkeyPOSIX

/// `latchkey import --from FORMAT [FILE|DIRECTORY]`: other programs' files, read without those programs
/// running — GNOME Keyring's keyring files, KeePass databases, a `pass` store, browsers' CSV exports. The
/// file is read and decrypted whole before the keychain is touched (a wrong password writes nothing); then
/// the items are sorted into new ones, ones the keychain has already and ones another item's primary key
/// keeps out, and the new ones are added in one transaction. Run twice, the second run adds nothing.
enum FormatImport {
    static let formats = ["gnome-keyring", "kdbx", "pass", "csv"]

    static let options = [
        OptionSpec(
            .fromFormat, .required, value: "format",
            "Import another program's file or store instead: gnome-keyring, kdbx, pass or csv (see above)."),
        OptionSpec(.dryRun, "With --from, read the file and report what would be imported, changing nothing."),
        OptionSpec(.keyFile, .required, value: "path", "With --from kdbx, the database's key file."),
        filePassphraseOption,
    ]

    /// How the password of a file read or written in another program's format is given.
    static let filePassphraseOption = OptionSpec(
        .filePassphraseFD, .required, value: "fd",
        "Read the password of the keyring file or KeePass database (--from, --to) from this open file descriptor (one line)."
    )

    /// The file's password: `--file-passphrase-fd`, else LATCHKEY_FILE_PASSPHRASE, else a prompt (twice when
    /// `confirm`).
    static func filePassphrase(_ arguments: ParsedArguments, context: CLIContext, prompt: String, confirm: Bool)
        throws -> Passphrase
    {
        context.protectMemory()
        if let fd = arguments.value(.filePassphraseFD) {
            guard let descriptor = Int32(fd), descriptor >= 0 else {
                throw UsageError(message: "--file-passphrase-fd needs a file descriptor number, not '\(fd)'")
            }
            return try PassphraseSource.fileDescriptor(descriptor).read()
        }
        if let value = context.environment["LATCHKEY_FILE_PASSPHRASE"] { return Passphrase(value) }
        let alternatives = "--file-passphrase-fd or LATCHKEY_FILE_PASSPHRASE for the file's password"
        var first = try context.prompt(prompt, alternatives: alternatives)
        defer { wipe(&first) }
        if confirm {
            var second = try context.prompt("retype " + prompt, alternatives: alternatives)
            defer { wipe(&second) }
            guard second == first else { throw CommandFailure(message: "the passwords do not match") }
        }
        return Passphrase(bytes: first)
    }

    /// The most a file read may hold.
    static let maximumFileBytes = 1 << 30

    /// A file's bytes, refusing what is not a regular file or is larger than `maximumFileBytes`.
    static func readFile(_ path: String) throws -> [UInt8] {
        do {
            return try Files.read(path, limit: maximumFileBytes)
        } catch {
            switch error {
            case .tooLarge(let size):
                throw KeychainError.param("\(path) has \(size) bytes; at most \(maximumFileBytes >> 30) GiB are read")
            case .notRegularFile: throw KeychainError.param("\(path) is not a regular file")
            case .system(let failure): throw CommandFailure(message: "cannot read \(path): \(failure)")
            }
        }
    }

    /// What a source gave: the items to import, the entries it left out, how the report names it, and lines
    /// to print before the report.
    struct Source {
        var candidates: [ImportCandidate] = []
        var skipped: [SkippedEntry] = []
        var name: String
        var notes: [String] = []
    }

    static func run(_ arguments: ParsedArguments, context: CLIContext) throws -> Int32 {
        let format = arguments.value(.fromFormat) ?? ""
        guard formats.contains(format) else {
            throw UsageError(message: "--from takes gnome-keyring, kdbx, pass or csv, not '\(format)'")
        }
        if arguments.has(.keyFile) && format != "kdbx" {
            throw UsageError(message: "--key-file goes with --from kdbx")
        }
        let path = arguments.positionals.first
        let caller = commandLineCaller(group: nil, environment: context.environment)
        let group = caller.accessGroups.first ?? "latchkey"
        let source: Source
        switch format {
        case "gnome-keyring": source = try keyrings(path, arguments: arguments, context: context)
        case "csv":
            guard let path else { throw UsageError(message: "--from csv needs the exported file") }
            source = try csv(path, group: group)
        case "kdbx":
            guard let path else { throw UsageError(message: "--from kdbx needs the database file") }
            source = try kdbx(path, group: group, arguments: arguments, context: context)
        default:
            source = try pass(path, group: group, context: context)
        }
        let keychainArgument = arguments.value(.keychainShort)
        let keychain = try KeychainDatabase.open(at: context.keychainPath(keychainArgument))
        _ = try context.unlock(
            keychain, arguments: arguments, prompt: "password to unlock \(context.keychainName(keychainArgument)): ")
        let dryRun = arguments.has(.dryRun)
        var report = try context.withProgress(dryRun ? "comparing" : "importing") { progress in
            try ItemImport.run(source.candidates, into: keychain, caller: caller, dryRun: dryRun, progress: progress)
        }
        report.skipped = source.skipped + report.skipped
        for line in source.notes + report.lines(source: source.name, dryRun: dryRun) { context.stdout.line(line) }
        return 0
    }

    /// Keyring files: the one named, every `*.keyring` of a directory named, or of GNOME Keyring's own
    /// (`$XDG_DATA_HOME/keyrings`), each with its password.
    static func keyrings(_ path: String?, arguments: ParsedArguments, context: CLIContext) throws -> Source {
        let directory =
            path
            ?? (context.environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
                ?? (context.environment["HOME"] ?? "") + "/.local/share") + "/keyrings"
        var files: [String]
        if FileStatus.of(path: directory, followingLinks: true)?.kind == .directory {
            guard let names = Files.entries(of: directory) else {
                throw CommandFailure(message: "cannot read the directory \(directory)")
            }
            files = names.filter { $0.hasSuffix(".keyring") }.sorted().map { directory + "/" + $0 }
            guard !files.isEmpty else { throw CommandFailure(message: "\(directory) holds no .keyring files") }
        } else {
            files = [directory]
        }
        var source = Source(name: files.count == 1 ? files[0] : "\(files.count) keyring files in \(directory)")
        var shared: Passphrase?
        for file in files {
            let bytes = try readFile(file)
            let password: Passphrase
            if let shared {
                password = shared
            } else {
                password = try filePassphrase(
                    arguments, context: context, prompt: "password of the keyring file \(file): ", confirm: false)
                if arguments.has(.filePassphraseFD) || context.environment["LATCHKEY_FILE_PASSPHRASE"] != nil {
                    shared = password  // Given once, for every file.
                }
            }
            let keyring: KeyringFile
            do throws(KeychainError) {
                keyring = try KeyringFile.read(bytes, password: password)
            } catch {
                throw KeychainError(error.status, "\(file): \(error.detail ?? error.status.message)")
            }
            source.notes.append("keyring \"\(keyring.name)\" (\(file)): \(keyring.items.count) items")
            for item in keyring.items {
                source.candidates.append(
                    ImportCandidate(
                        item: SecretServiceMapping.item(
                            label: item.label, attributes: item.attributes, secret: item.secret, created: item.created,
                            modified: item.modified),
                        name: "\(keyring.name)/\(item.label)", identity: .secretService))
            }
        }
        return source
    }

    /// A browser's or Bitwarden's CSV export.
    static func csv(_ path: String, group: String) throws -> Source {
        let (format, entries, skipped) = try BrowserExport.read(try readFile(path), what: path)
        return Source(
            candidates: entries.map {
                ImportCandidate(
                    item: EntryMapping.item(for: $0, group: group), name: $0.labelPath, identity: .primaryKey)
            }, skipped: skipped, name: "\(path) (\(format.rawValue))")
    }

    /// A KeePass database (KDBX 4 or 3.1), opened with its password, its key file, or both (an empty password
    /// with a key file: the key file alone).
    static func kdbx(_ path: String, group: String, arguments: ParsedArguments, context: CLIContext) throws -> Source {
        let bytes = try readFile(path)
        let keyFile = try arguments.value(.keyFile).map(readFile)
        let password = try filePassphrase(arguments, context: context, prompt: "password of \(path): ", confirm: false)
        let database: KDBXDatabase
        do throws(KeychainError) {
            database = try KDBXDatabase.read(
                bytes, password: password.byteCount == 0 && keyFile != nil ? nil : password, keyFile: keyFile,
                limits: arguments.has(.allowExpensiveKDF) ? .relaxed : .default, what: path)
        } catch {
            throw error.status == .param && !arguments.has(.allowExpensiveKDF)
                ? KeychainError.param((error.detail ?? "") + "; pass --allow-expensive-kdf to derive it anyway") : error
        }
        return Source(
            candidates: database.entries.map {
                ImportCandidate(
                    item: EntryMapping.item(for: $0, group: group), name: $0.labelPath, identity: .primaryKey)
            }, skipped: database.skipped, name: "\(path) (KDBX \(database.version))")
    }

    /// A `pass` store: the directory named, else PASSWORD_STORE_DIR, else ~/.password-store; each entry
    /// decrypted by the user's gpg. One that gpg cannot decrypt stops the import before anything is written.
    static func pass(_ path: String?, group: String, context: CLIContext) throws -> Source {
        let environment = context.environment
        let directory =
            path ?? environment["PASSWORD_STORE_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? "") + "/.password-store"
        let files = try PasswordStore.files(in: directory)
        guard let gpg = PasswordStore.gpg(path: environment["PATH"] ?? "/usr/bin:/bin") else {
            throw CommandFailure(message: "gpg is not on the PATH; pass stores are decrypted with it")
        }
        let options = (environment["PASSWORD_STORE_GPG_OPTS"] ?? "").split(whereSeparator: \.isWhitespace).map(
            String.init)
        let gpgEnvironment = environment.filter { !AgentAccess.secretVariables.contains($0.key) }
        var source = Source(name: directory)
        // gpg runs once per entry, as pass runs it: on every core at once (gpg-agent answers them in turn).
        var contents = try ParallelMap.map(files) { (file) throws(KeychainError) in
            try PasswordStore.decrypt(directory + "/" + file, gpg: gpg, options: options, environment: gpgEnvironment)
        }
        defer { for index in contents.indices { wipe(&contents[index]) } }
        for (index, file) in files.enumerated() {
            let entry = PasswordStore.entry(relative: file, content: contents[index])
            source.candidates.append(
                ImportCandidate(
                    item: EntryMapping.item(for: entry, group: group), name: entry.labelPath, identity: .primaryKey))
        }
        return source
    }
}
