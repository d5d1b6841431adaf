import FoundationEssentials
import Latchkey
import LatchkeyCrypto
import LatchkeyPOSIX
import LatchkeySSH

/// `latchkey ssh-key ACTION`: the SSH keys the agent signs with (`SSHKeyStore`: held keys of access group
/// `com.latchkey.ssh`). `create` makes one in the keychain that never leaves it — through the agent when it
/// serves the keychain to this program, so the key is born inside `latchkeyd`; `import` stores an OpenSSH
/// private key file's key; `list`, `public`, `delete` and `set` show, print, remove and configure them.
enum SSHKeyCommands {
    static let actions = ["create", "import", "list", "public", "delete", "set"]

    static let command = Command(
        "ssh-key",
        synopsis: "create|import|list|public|delete|set [name|file] [options]",
        summary: "Make, import, list and remove the SSH keys latchkeyd's SSH agent signs with.",
        details: """
            The keychain's SSH keys are what ssh, ssh-add and ssh-keygen -Y sign use through latchkeyd's SSH agent \
            (SSH_AUTH_SOCK=$XDG_RUNTIME_DIR/latchkey/ssh-agent.sock). `ssh-key create NAME` makes a key in the keychain \
            that is never handed out (ECDSA P-256 — made inside the TPM when one answers —, or Ed25519 with -t ed25519) and prints its public key line for \
            authorized_keys. `ssh-key import FILE` stores the key of an OpenSSH private key file (encrypted ones too: \
            the file's passphrase comes from --key-passphrase-fd or --key-passphrase-file, else it is asked for on the \
            terminal); from then on it is held by the keychain like a made one, and the file can go. `ssh-key list` \
            lists them, one line each: size, fingerprint, name, type, then where it was made (origin=made-in-tpm, \
            made-in-keychain or imported) and what each use needs. `ssh-key public NAME` \
            prints a key's public key line; `ssh-key delete NAME` removes it from the keychain. NAME is a key's name \
            (its comment) or its fingerprint (SHA256:…). `ssh-key set NAME` changes what a use needs: --confirm yes \
            asks through pinentry (an approval then covers the same program and destination for --approval-seconds); \
            --programs registered lets only programs registered with the agent use it (--programs ID,… only those), \
            --programs any every program of the user; --approval-scope tree lets one approval cover every destination \
            of the same process tree (an Ansible run to many hosts). create and import take the same options.
            """,
        options: [
            OptionSpec(.keyType, .required, value: "type", "With create: ecdsa (P-256, the default) or ed25519."),
            OptionSpec(.confirm, .required, value: "yes|no", "Whether each use asks through pinentry."),
            OptionSpec(
                .approvalSeconds, .required, value: "seconds",
                "How long one approval covers the same program and destination (default 60; 0 asks every time)."),
            OptionSpec(
                .approvalScope, .required, value: "destination|tree",
                "What one approval covers: the same destination (the default), or any use by the same process tree."),
            OptionSpec(
                .programs, .required, value: "any|registered|ids",
                "Which programs may use the key: any program of the user, registered ones, or the registered ones with these application identifiers (comma-separated)."
            ),
            OptionSpec(
                .keyPassphraseFD, .required, value: "fd",
                "With import: read the key file's passphrase from this file descriptor."),
            OptionSpec(
                .keyPassphraseFile, .required, value: "path",
                "With import: read the key file's passphrase from this file."),
            OptionSpec(.keychain, .required, value: "keychain", "The keychain (default: the default keychain)."),
        ] + passphraseOptions,
        positionals: 1...2
    ) { arguments, context in
        let action = arguments.positionals[0]
        guard actions.contains(action) else {
            throw UsageError(message: "unknown ssh-key action '\(action)'; one of: \(actions.joined(separator: ", "))")
        }
        let argument = arguments.positionals.dropFirst().first
        switch action {
        case "list":
            guard argument == nil else { throw UsageError(message: "ssh-key list takes no argument") }
        default:
            guard argument != nil else {
                throw UsageError(message: "ssh-key \(action) needs a \(action == "import" ? "key file" : "key name")")
            }
        }
        if action == "import" { return try importKey(argument ?? "", arguments, context) }
        let store = try CommandKeychain.open(
            arguments, context: context, group: SSHKeyStore.accessGroup, keychain: .option(arguments.value(.keychain)))
        let keys = SSHKeyStore(service: store.service)
        switch action {
        case "create":
            let type: KeyType
            switch arguments.value(.keyType) ?? "ecdsa" {
            case "ecdsa": type = .ellipticCurve
            case "ed25519": type = .ed25519
            case let other: throw UsageError(message: "-t is ecdsa or ed25519, not '\(other)'")
            }
            let settings = try SSHKeyCommands.settings(arguments, base: SSHKeySettings())
            let made = try store.run { try keys.create(type, bits: 256, comment: argument ?? "", settings: settings) }
            context.stdout.line(made.line(comment: argument ?? ""))
        case "list":
            for identity in try store.run({ try keys.identities() }) { context.stdout.line(describe(identity)) }
        case "public":
            let identity = try store.run { try find(argument ?? "", in: keys) }
            context.stdout.line(identity.publicKey.line(comment: identity.comment))
        case "delete":
            let identity = try store.run { try find(argument ?? "", in: keys) }
            try store.run { try keys.remove(identity) }
            context.stderr.line("deleted the SSH key \(identity.publicKey.fingerprint) (\(identity.comment))")
        default:  // set
            let identity = try store.run { try find(argument ?? "", in: keys) }
            guard let current = identity.settings else {
                throw KeychainError(.decode, "the key's settings are damaged; delete it and add it again")
            }
            let changed = try SSHKeyCommands.settings(arguments, base: current)
            try store.run { try keys.store(changed, forLabel: identity.publicKey.applicationLabel) }
            context.stdout.line(describe(identity.with(changed)))
        }
        return 0
    }

    /// `import FILE`: the key file opened here (its passphrase read here), its key stored in the keychain opened
    /// here with the keychain's passphrase — a key file is read by no other process.
    private static func importKey(_ path: String, _ arguments: ParsedArguments, _ context: CLIContext) throws -> Int32 {
        context.protectMemory()  // A private key is about to be in this process's memory.
        var contents: [UInt8]
        do {
            contents = try Files.read(path, limit: 1 << 20)
        } catch {
            throw CommandFailure(message: "cannot read the key file \(path): \(error)")
        }
        defer { wipe(&contents) }
        let file: OpenSSHKeyFile
        do {
            file = try OpenSSHKeyFile(String(decoding: contents, as: UTF8.self))
        } catch {
            throw KeychainError(.decode, "\(path): \(error)")
        }
        let passphrase = file.isEncrypted ? try keyFilePassphrase(path, arguments, context) : nil
        let opened: (key: SSHPrivateKey, comment: String)
        do {
            opened = try file.privateKey(passphrase: passphrase)
        } catch .wrongPassphrase {
            throw KeychainError(.authFailed, "\(path): \(OpenSSHKeyFile.Failure.wrongPassphrase)")
        } catch {
            throw KeychainError(.decode, "\(path): \(error)")
        }
        let keychainPath = context.keychainPath(arguments.value(.keychain))
        let keychain = try context.openUnlocked(
            keychainPath, displayName: arguments.value(.keychain) ?? "default", arguments: arguments)
        let keys = SSHKeyStore(
            service: LocalKeychainService(
                database: keychain,
                caller: commandLineCaller(group: SSHKeyStore.accessGroup, environment: context.environment)))
        let existing = try keys.identity(blob: opened.key.publicKey.blob)
        let settings = try SSHKeyCommands.settings(arguments, base: existing?.settings ?? SSHKeySettings())
        try keys.add(opened.key, comment: opened.comment, settings: settings)
        context.stdout.line(
            "\(existing == nil ? "imported" : "updated") \(opened.key.publicKey.fingerprint) \(opened.comment)")
        return 0
    }

    /// The key file's passphrase: from --key-passphrase-fd, --key-passphrase-file, else the terminal.
    private static func keyFilePassphrase(_ path: String, _ arguments: ParsedArguments, _ context: CLIContext) throws
        -> SecureBytes
    {
        let passphrase: Passphrase
        if let fd = arguments.value(.keyPassphraseFD) {
            guard let descriptor = Int32(fd), descriptor >= 0 else {
                throw UsageError(message: "--key-passphrase-fd needs a file descriptor number, not '\(fd)'")
            }
            passphrase = try PassphraseSource.fileDescriptor(descriptor).read()
        } else if let file = arguments.value(.keyPassphraseFile) {
            passphrase = try PassphraseSource.keyFile(file).read()
        } else {
            var typed = try context.prompt("passphrase for \(path): ")
            defer { wipe(&typed) }
            passphrase = Passphrase(bytes: typed)
        }
        return passphrase.withUnsafeBytes { SecureBytes(copying: $0) }
    }

    /// `base` with the options' changes.
    private static func settings(_ arguments: ParsedArguments, base: SSHKeySettings) throws -> SSHKeySettings {
        var settings = base
        switch arguments.value(.confirm) {
        case nil: break
        case "yes": settings.confirm = true
        case "no": settings.confirm = false
        case let other?: throw UsageError(message: "--confirm is yes or no, not '\(other)'")
        }
        if let text = arguments.value(.approvalSeconds) {
            guard let seconds = Int(text), (0...86_400).contains(seconds) else {
                throw UsageError(message: "--approval-seconds needs 0 to 86400 seconds, not '\(text)'")
            }
            settings.approvalSeconds = seconds
        }
        switch arguments.value(.approvalScope) {
        case nil: break
        case "destination": settings.approvalScope = .destination
        case "tree": settings.approvalScope = .processTree
        case let other?: throw UsageError(message: "--approval-scope is destination or tree, not '\(other)'")
        }
        switch arguments.value(.programs) {
        case nil: break
        case "any": settings.programs = .any
        case "registered": settings.programs = .registered([])
        case let list?:
            let identifiers = list.split(separator: ",").map(String.init)
            for identifier in identifiers { try CallerIdentity.validate(name: identifier, as: "--programs") }
            guard !identifiers.isEmpty else {
                throw UsageError(message: "--programs is any, registered or application identifiers")
            }
            settings.programs = .registered(identifiers)
        }
        return settings
    }

    /// The key named by its comment or fingerprint; `errSecItemNotFound` for none, `errSecParam` for a name
    /// several keys share.
    private static func find(_ name: String, in keys: SSHKeyStore) throws -> SSHKeyStore.Identity {
        let all = try keys.identities()
        let matches =
            name.hasPrefix("SHA256:")
            ? all.filter { $0.publicKey.fingerprint == name } : all.filter { $0.comment == name }
        guard let first = matches.first else { throw KeychainError(.itemNotFound, "no SSH key named \(name)") }
        guard matches.count == 1 else {
            throw KeychainError.param(
                "\(matches.count) SSH keys are named \(name); name one by its fingerprint (latchkey ssh-key list)")
        }
        return first
    }

    /// One line of `list`: `256 SHA256:… name (ECDSA)` as `ssh-add -l` writes it, then how the key is held and
    /// what its use needs, as `key=value` words.
    static func describe(_ identity: SSHKeyStore.Identity) -> String {
        let key = identity.publicKey
        let type: String
        switch key.kind {
        case .ecdsa: type = "ECDSA"
        case .rsa: type = "RSA"
        case .ed25519: type = "ED25519"
        }
        var words = [
            "\(key.bits) \(key.fingerprint) \(identity.comment) (\(type))",
            identity.storage == .tpm
                ? "origin=made-in-tpm"
                : identity.tokenID == HeldKeyRequest.secureEnclaveTokenID
                    ? "origin=made-in-keychain" : "origin=imported",
        ]
        guard let settings = identity.settings else { return (words + ["settings=damaged"]).joined(separator: " ") }
        words.append("confirm=\(settings.confirm ? "yes" : "no")")
        if settings.confirm {
            words.append("approval=\(settings.approvalSeconds)s")
            if settings.approvalScope == .processTree { words.append("approval-scope=tree") }
        }
        switch settings.programs {
        case .any: words.append("programs=any")
        case .registered(let identifiers):
            words.append("programs=" + (identifiers.isEmpty ? "registered" : identifiers.joined(separator: ",")))
        }
        if !settings.destinations.isEmpty {
            words.append("destinations=" + settings.destinations.map(\.summary).joined(separator: ","))
        }
        if let expires = settings.expires {
            words.append("expires=" + expires.formatted(.iso8601))
        }
        return words.joined(separator: " ")
    }
}
