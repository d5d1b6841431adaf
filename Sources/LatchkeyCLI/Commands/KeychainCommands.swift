import FoundationEssentials
import Latchkey
import LatchkeyPOSIX

/// Commands that act on keychain files: create, delete, list, default, info, passphrase, lock, unlock,
/// settings.
enum KeychainCommands {
    static let kdfOptions = [
        OptionSpec(
            .kdfMemory, .required, value: "MiB",
            "Use this much memory for Argon2id, in MiB (at least 19; the default is 64)."),
        OptionSpec(
            .kdfPasses, .required, value: "count",
            "Make this many Argon2id passes (at least 2; the default is 3)."),
    ]

    /// The key derivation the --kdf options ask for, nil when none is given.
    static func keyDerivation(_ arguments: ParsedArguments) throws -> KeyDerivation? {
        guard arguments.has(.kdfMemory) || arguments.has(.kdfPasses) else { return nil }
        var derivation = KeyDerivation.default
        if let memory = arguments.value(.kdfMemory) {
            guard let mebibytes = UInt64(memory), mebibytes <= UInt64.max >> 20 else {
                throw UsageError(message: "--kdf-memory needs a number of MiB, not '\(memory)'")
            }
            derivation.memoryBytes = mebibytes << 20
        }
        if let passes = arguments.value(.kdfPasses) {
            guard let count = UInt64(passes) else {
                throw UsageError(message: "--kdf-passes needs a number, not '\(passes)'")
            }
            derivation.passes = count
        }
        // The bounds are the engine's: it says what it accepts.
        do throws(KeychainError) {
            try derivation.validate()
        } catch {
            throw UsageError(message: "--kdf-memory/--kdf-passes: \(error.detail ?? error.message)")
        }
        return derivation
    }

    /// A new passphrase: `insecureKey`'s value (`-p`, warned about; nil for a command without one), a file
    /// descriptor, or a prompt given twice. For a new keychain (`fdKey` `--passphrase-fd`) the key file and
    /// LATCHKEY_PASSPHRASE count too.
    static func newPassphrase(
        _ arguments: ParsedArguments, context: CLIContext, insecureKey: OptionKey?, fdKey: OptionKey,
        prompts: (String, String)
    ) throws -> Passphrase {
        if let insecureKey, let value = arguments.value(insecureKey) {
            context.warnVisiblePassphrase(insecureKey.spelling, safe: "the prompt or \(fdKey.spelling)")
            return Passphrase(value)
        }
        if let fd = arguments.value(fdKey) {
            guard let descriptor = Int32(fd), descriptor >= 0 else {
                throw UsageError(message: "\(fdKey.spelling) needs a file descriptor number, not '\(fd)'")
            }
            return try PassphraseSource.fileDescriptor(descriptor).read()
        }
        if fdKey == .passphraseFD
            && (arguments.has(.passphraseFile) || context.environment[PassphraseSource.environmentVariable] != nil)
        {
            return try context.passphrase(arguments, prompt: prompts.0)
        }
        let alternatives =
            fdKey == .passphraseFD ? CLIContext.passphraseAlternatives : "\(fdKey.spelling) for the new passphrase"
        for _ in 0..<3 {
            let first = try context.prompt(prompts.0, alternatives: alternatives)
            let second = try context.prompt(prompts.1, alternatives: alternatives)
            if first == second { return Passphrase(bytes: first) }
            context.stderr.line("passwords don't match")
        }
        throw CommandFailure(message: "the passphrases did not match three times")
    }

    static let create = Command(
        "create-keychain", synopsis: "[-p passphrase] [--kdf-memory MiB] [--kdf-passes count] [keychain...]",
        summary: "Create keychains.",
        details: """
            Creates each named keychain (a path, or a name in the keychain directory), or the default keychain when \
            none is named, with mode 0600 in a private directory. The passphrase is asked for twice on the terminal \
            unless --passphrase-fd, --passphrase-file or LATCHKEY_PASSPHRASE supplies it. The key derivation \
            defaults to Argon2id with 64 MiB and 3 passes; a keychain that already exists is left untouched.
            """,
        options: [
            OptionSpec(
                .passphrase, .required, value: "passphrase",
                "Use this passphrase (insecure: other users can see it in the process list).")
        ]
            + kdfOptions + passphraseOptions,
        positionals: 0...Int.max
    ) { arguments, context in
        let derivation = try keyDerivation(arguments) ?? .default
        let paths =
            arguments.positionals.isEmpty
            ? [context.keychainPath(nil)] : arguments.positionals.map(context.keychainPath)
        for path in paths {
            let passphrase = try newPassphrase(
                arguments, context: context, insecureKey: .passphrase, fdKey: .passphraseFD,
                prompts: ("password for new keychain: ", "retype password for new keychain: "))
            _ = try KeychainDatabase.create(at: path, passphrase: passphrase, keyDerivation: derivation)
        }
        return 0
    }

    static let delete = Command(
        "delete-keychain", synopsis: "keychain...", summary: "Delete keychains.",
        details: """
            Deletes each named keychain file together with its write-ahead log, shared-memory file and device key. \
            Every item in it is gone for good, so a keychain must be named: there is no default here.
            """,
        options: [], positionals: 1...Int.max
    ) { arguments, context in
        for name in arguments.positionals { try KeychainDatabase.delete(at: context.keychainPath(name)) }
        return 0
    }

    static let list = Command(
        "list-keychains", synopsis: "[-d user]", summary: "List the keychains.",
        details: """
            Prints the default keychain and every other keychain file in the keychain directory, one quoted path \
            per line, as `security list-keychains` does. Latchkey keeps no search list: name a keychain on each \
            command, or set LATCHKEY_KEYCHAIN.
            """,
        options: [
            OptionSpec(.domain, .required, value: "domain", "Only \"user\" is known; other domains are refused."),
            OptionSpec(.searchList, "Not supported: Latchkey keeps no search list."),
        ],
        positionals: 0...0
    ) { arguments, context in
        if let domain = arguments.value(.domain), !"user".hasPrefix(domain) || domain.isEmpty {
            throw UsageError(message: "invalid domain \"\(domain)\"; Latchkey knows only the user domain")
        }
        if arguments.has(.searchList) {
            throw CommandFailure(
                message: "Latchkey keeps no search list; name a keychain on each command or set LATCHKEY_KEYCHAIN")
        }
        let defaultPath = context.keychainPath(nil)
        let directory = KeychainLocation.directory(environment: context.environment)
        // No directory: no keychains.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let others = names.filter { $0.hasSuffix(".keychain") }.map { directory + "/" + $0 }.filter {
            $0 != defaultPath
        }.sorted()
        for path in ([defaultPath] + others) where FileManager.default.fileExists(atPath: path) {
            context.stdout.line("    \"\(path)\"")
        }
        return 0
    }

    static let defaultKeychain = Command(
        "default-keychain", synopsis: "[-d user] [-s [keychain]]", summary: "Show or set the default keychain.",
        details: """
            Without options, prints the default keychain as a quoted path. With -s and a keychain, makes that \
            keychain the default for latchkey, the Swift API and the SecItem functions (LATCHKEY_KEYCHAIN still \
            takes precedence); with -s alone, returns to the built-in default.
            """,
        options: [
            OptionSpec(.domain, .required, value: "domain", "Only \"user\" is known; other domains are refused."),
            OptionSpec(.setDefault, "Set the default keychain to the keychain named after the options."),
        ]
    ) { arguments, context in
        if let domain = arguments.value(.domain), !"user".hasPrefix(domain) || domain.isEmpty {
            throw UsageError(message: "invalid domain \"\(domain)\"; Latchkey knows only the user domain")
        }
        if arguments.has(.setDefault) {
            let path = arguments.positionals.first.map { context.keychainPath($0) }
            try KeychainLocation.setConfiguredDefault(path, environment: context.environment)
            return 0
        }
        guard arguments.positionals.isEmpty else { throw UsageError(message: "a keychain is only taken with -s") }
        context.stdout.line("    \"\(context.keychainPath(nil))\"")
        return 0
    }

    static let showInfo = Command(
        "show-keychain-info", synopsis: "[keychain]", summary: "Show a keychain's settings.",
        details: """
            Prints the keychain's lock settings to standard error in the layout of `security show-keychain-info` \
            (Keychain "<name>" lock-on-sleep timeout=300s), then Latchkey's own facts to standard output: the \
            path, the format version, the key derivation, the number of items and whether the device key works. \
            It needs no passphrase.
            """,
        options: []
    ) { arguments, context in
        let path = context.keychainPath(arguments.positionals.first)
        let keychain = try KeychainDatabase.open(at: path)
        let settings = try keychain.settings
        var line = "Keychain \"\(arguments.positionals.first ?? path)\""
        if settings.lockOnSleep { line += " lock-on-sleep" }
        if let seconds = settings.autoLockAfterSeconds {
            line += " use-lock-interval timeout=\(seconds)s"
        } else {
            line += " no-timeout"
        }
        context.stderr.line(line)
        let report = KeychainDatabase.inspect(at: path)
        context.stdout.line("path: \(path)")
        context.stdout.line(
            "format: \(report.formatVersion.map(String.init) ?? "?") (this Latchkey reads up to \(report.supportedFormatVersion))"
        )
        context.stdout.line("key derivation: \(try keychain.keyDerivation)")
        context.stdout.line("items: \(try keychain.rowCount())")
        if let tpm = report.tpm {
            context.stdout.line(
                "device key: \(report.deviceKeyWorks ? "sealed by the TPM" : "sealed by a TPM that cannot be used now (always-available items open after the first unlock)")"
            )
            var line = "tpm: enrolled, \(tpm.address)"
            if !tpm.present {
                line += " (absent: \(tpm.problem ?? "no answer"))"
            } else if tpm.sameTPM != true {
                line += " (not the TPM the keychain is sealed to: use latchkey tpm recover)"
            } else if let lockout = tpm.lockout {
                line +=
                    ", lockout: \(lockout.inLockout ? "locked out" : "not locked out"), \(lockout.failedTries) of \(lockout.maxTries) failed attempts"
            }
            context.stdout.line(line)
        } else {
            context.stdout.line(
                "device key: \(report.deviceKeyWorks ? "present" : "absent (always-available items open after the first unlock)")"
            )
            context.stdout.line("tpm: not enrolled")
        }
        if let status = try AgentAccess.client(for: path, context: context)?.status() {
            context.stdout.line("agent: running (pid \(status.agentProcessIdentifier ?? 0)), \(status.lockState)")
        } else {
            context.stdout.line("agent: not running")
        }
        return 0
    }

    static let setPassword = Command(
        "set-keychain-password",
        synopsis: "[-o old] [-p new] [--new-passphrase-fd fd] [--kdf-memory MiB] [--kdf-passes count] [keychain]",
        summary: "Change a keychain's passphrase.",
        details: """
            Changes the passphrase, re-wrapping only the keychain's keybag: the time it takes does not depend on \
            the number of items. The old passphrase is asked for (or read from --passphrase-fd, --passphrase-file \
            or LATCHKEY_PASSPHRASE), then the new one twice (or read from --new-passphrase-fd). --kdf-memory and \
            --kdf-passes change the Argon2id cost at the same time.
            """,
        options: [
            OptionSpec(
                .oldPassphrase, .required, value: "passphrase", "The old passphrase (insecure: visible to other users)."
            ),
            OptionSpec(
                .passphrase, .required, value: "passphrase", "The new passphrase (insecure: visible to other users)."),
            OptionSpec(
                .newPassphraseFD, .required, value: "fd",
                "Read the new passphrase from this open file descriptor (one line)."),
        ] + kdfOptions + passphraseOptions
    ) { arguments, context in
        let path = context.keychainPath(arguments.positionals.first)
        let keychain = try KeychainDatabase.open(at: path)
        let old: Passphrase
        if let value = arguments.value(.oldPassphrase) {
            context.warnVisiblePassphrase("-o", safe: "the prompt, --passphrase-fd or --passphrase-file")
            old = Passphrase(value)
        } else {
            old = try context.passphrase(arguments, prompt: "Old Password: ")
        }
        let new = try newPassphrase(
            arguments, context: context, insecureKey: .passphrase, fdKey: .newPassphraseFD,
            prompts: ("New Password: ", "Retype New Password: "))
        try keychain.changePassphrase(from: old, to: new, keyDerivation: try keyDerivation(arguments))
        return 0
    }

    static let lock = Command(
        "lock-keychain", synopsis: "[-a | keychain]", summary: "Lock a keychain.",
        details: """
            Tells the Latchkey agent to lock the keychain: items readable only while unlocked are not served \
            until the next unlock; items readable after the first unlock still are. Without an agent, no process \
            holds the keychain's keys between commands: it is already locked, and this says so.
            """,
        options: [OptionSpec(.everyKeychain, "Lock every keychain (the one the agent serves).")]
    ) { arguments, context in
        let path = context.keychainPath(arguments.positionals.first)
        guard FileManager.default.fileExists(atPath: path) || arguments.has(.everyKeychain) else {
            throw KeychainError(.noSuchKeychain, "\(path) does not exist")
        }
        if let client = try AgentAccess.client(for: path, context: context) {
            try AgentKeychainService(client: client).lock()
            return 0
        }
        context.stderr.line(
            "latchkey: lock-keychain: no agent is running; the keychain's keys are held by no process, so it is locked")
        return 0
    }

    static let unlock = Command(
        "unlock-keychain", synopsis: "[-p passphrase] [--no-agent] [keychain]", summary: "Unlock a keychain.",
        details: """
            Unlocks the keychain in the Latchkey agent, starting the agent (latchkeyd, beside latchkey or on the \
            PATH) when it is not running. The agent then holds the keys — in locked memory, never on disk — until \
            lock-keychain, its idle timeout (set-keychain-settings -t), or its end, and serves registered programs \
            without asking again. With --no-agent it only checks the passphrase: exit status 0 when it is right, \
            51 (errSecAuthFailed) when it is not. With --unattended it asks for no passphrase: the keychain opens \
            through its unattended TPM unlock (tpm enroll --unattended), whose refusal after a PCR change (exit \
            status 36) says why. With --derived-key-fd it unlocks nothing: it derives the key the passphrase opens \
            the keychain with and writes it to that descriptor, which must be a pipe — what pam_latchkey runs at the \
            login's auth step, so the derivation is done when the session step hands the key to the agent.
            """,
        options: [
            OptionSpec(
                .passphrase, .required, value: "passphrase", "Use this passphrase (insecure: visible to other users)."),
            OptionSpec(.noPassphrase, "Accepted for compatibility; Latchkey always needs the passphrase."),
            OptionSpec(.noAgent, "Only check the passphrase; do not start or use the agent."),
            OptionSpec(
                .unattended,
                "Unlock through the keychain's unattended TPM unlock (PCR values or a signed policy), with no passphrase."
            ),
            OptionSpec(
                .derivedKeyFD, .required, value: "fd",
                "Unlock nothing: write the key the passphrase derives to this pipe (for pam_latchkey)."),
        ] + passphraseOptions
    ) { arguments, context in
        let path = context.keychainPath(arguments.positionals.first)
        let keychain = try KeychainDatabase.open(at: path)
        if arguments.has(.unattended) {
            return try unlockUnattended(keychain, path: path, arguments, context: context)
        }
        var derivedKeyPipe: FileDescriptor?
        if let value = arguments.value(.derivedKeyFD) { derivedKeyPipe = try Self.derivedKeyPipe(value) }
        let passphrase: Passphrase
        if let value = arguments.value(.passphrase) {
            context.warnVisiblePassphrase("-p", safe: "the prompt, --passphrase-fd or --passphrase-file")
            passphrase = Passphrase(value)
        } else {
            passphrase = try context.passphrase(
                arguments, prompt: "password to unlock \(context.keychainName(arguments.positionals.first)): ")
        }
        if let derivedKeyPipe {
            try writeDerivedKey(try keychain.deriveUnlockKey(from: passphrase), to: derivedKeyPipe)
            return 0
        }
        if arguments.has(.noAgent) {
            try keychain.unlock(with: passphrase)
            context.stderr.line(
                "latchkey: unlock-keychain: the passphrase is correct; without the agent the keychain stays unlocked only within each latchkey command"
            )
            return 0
        }
        // A running agent checks the passphrase itself (through its throttle, and with its TPM when the keychain
        // is bound to one): checking it here too would cost an enrolled keychain a second TPM authorization, and
        // need this command to reach the TPM. A new agent is started only for a passphrase checked here.
        let client: AgentClient
        if let running = try AgentAccess.client(for: path, context: context) {
            client = running
        } else {
            try keychain.verifyPassphrase(passphrase)
            client = try AgentAccess.start(for: path, context: context)
        }
        try AgentKeychainService(client: client).unlock(with: passphrase)
        return 0
    }

    /// The descriptor `--derived-key-fd` names, which must be a pipe: the key opens the keychain as its
    /// passphrase does, so it goes to the process that asked for it, never to a file or a terminal.
    static func derivedKeyPipe(_ value: String) throws -> FileDescriptor {
        guard let number = Int32(value), number >= 0 else {
            throw UsageError(message: "--derived-key-fd needs a file descriptor number, not '\(value)'")
        }
        let descriptor = FileDescriptor(rawValue: number)
        guard let status = FileStatus.of(descriptor: descriptor) else {
            throw UsageError(message: "--derived-key-fd: descriptor \(number) is not open")
        }
        guard status.kind == .fifo else {
            throw UsageError(
                message: "--derived-key-fd: descriptor \(number) is not a pipe; the key is written only to a pipe")
        }
        return descriptor
    }

    /// Writes a derived key to its pipe, from locked memory.
    static func writeDerivedKey(_ key: DerivedUnlockKey, to pipe: FileDescriptor) throws {
        do {
            try key.withEncoded { (bytes) throws(Errno) in try pipe.writeAll(bytes) }
        } catch {
            throw KeychainError(.io, "cannot write the derived key to descriptor \(pipe.rawValue): \(error)")
        }
    }

    /// `unlock-keychain --unattended`: the TPM opens the keychain with no passphrase. A running agent unseals
    /// it itself; else the unseal is tried here first (its refusal is the answer) and an agent is started for it.
    static func unlockUnattended(
        _ keychain: KeychainDatabase, path: String, _ arguments: ParsedArguments, context: CLIContext
    ) throws -> Int32 {
        guard !arguments.has(.passphrase), !arguments.has(.passphraseFD), !arguments.has(.passphraseFile) else {
            throw UsageError(message: "--unattended takes no passphrase")
        }
        guard !arguments.has(.derivedKeyFD) else {
            throw UsageError(message: "--derived-key-fd derives from a passphrase; --unattended takes none")
        }
        if arguments.has(.noAgent) {
            try keychain.unlockUnattended()
            context.stderr.line(
                "latchkey: unlock-keychain: the TPM opens the keychain unattended; without the agent the keychain stays unlocked only within each latchkey command"
            )
            return 0
        }
        let client: AgentClient
        if let running = try AgentAccess.client(for: path, context: context) {
            client = running
        } else {
            try keychain.unlockUnattended()
            client = try AgentAccess.start(for: path, context: context)
        }
        _ = try client.send(.unlockUnattended)
        return 0
    }

    static let setSettings = Command(
        "set-keychain-settings", synopsis: "[-lu] [-t timeout] [keychain]", summary: "Set a keychain's lock settings.",
        details: """
            Stores the lock settings in the keychain; the Latchkey agent enforces them at once. -t locks the \
            keychain after that many seconds without use (and implies -u); without -t there is no timeout. -l \
            locks it before the system sleeps (the agent watches logind on the system bus and delays the sleep \
            until the keys are wiped). Options not given are turned off, as with `security`.
            """,
        options: [
            OptionSpec(.lockOnSleep, "Lock the keychain when the system sleeps."),
            OptionSpec(.lockAfterTimeout, "Lock the keychain after the timeout given with -t."),
            OptionSpec(.timeout, .required, value: "seconds", "Lock after this many seconds without use."),
        ] + passphraseOptions
    ) { arguments, context in
        var seconds: Int?
        if let text = arguments.value(.timeout) {
            // Its bounds are the keychain's to check: the same error through the agent and without it.
            guard let value = Int(text) else {
                throw UsageError(message: "-t needs a positive number of seconds, not '\(text)'")
            }
            seconds = value
        }
        let path = context.keychainPath(arguments.positionals.first)
        let (service, _) = try administration(path, context: context)
        let passphrase = try context.passphrase(
            arguments, prompt: "password to unlock \(context.keychainName(arguments.positionals.first)): ")
        try service.updateSettings(
            KeychainSettings(autoLockAfterSeconds: seconds, lockOnSleep: arguments.has(.lockOnSleep)),
            passphrase: passphrase)
        return 0
    }
}
