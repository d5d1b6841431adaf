public import FoundationEssentials
public import Latchkey
import LatchkeyPOSIX

/// The `latchkey` command-line tool, modelled on macOS `security`. The executable is a thin `main` around
/// `run`; tests and the fuzzer call `run` in-process with captured output.
public enum LatchkeyCommandLine {
    /// Exit status of a usage error (sysexits' EX_USAGE), distinct from every keychain status.
    public static let usageStatus: Int32 = 64
    /// Exit status when an item is not found: errSecItemNotFound's low byte, as `security` exits.
    public static let notFoundStatus: Int32 = 44

    /// Every command by name, in the order `help` lists them, each built only when asked for: a run builds
    /// the one it runs, not the table of all (a tenth of a find's start; docs/DESIGN-NOTES.md, "The CLI's
    /// start"). `CommandTableTests` checks that each name is its command's.
    static let commandTable: [(name: String, command: @Sendable () -> Command)] = [
        ("create-keychain", { KeychainCommands.create }),
        ("delete-keychain", { KeychainCommands.delete }),
        ("list-keychains", { KeychainCommands.list }),
        ("default-keychain", { KeychainCommands.defaultKeychain }),
        ("show-keychain-info", { KeychainCommands.showInfo }),
        ("set-keychain-password", { KeychainCommands.setPassword }),
        ("lock-keychain", { KeychainCommands.lock }),
        ("unlock-keychain", { KeychainCommands.unlock }),
        ("set-keychain-settings", { KeychainCommands.setSettings }),
        ("add-generic-password", { PasswordCommands.add(.generic) }),
        ("find-generic-password", { PasswordCommands.find(.generic) }),
        ("delete-generic-password", { PasswordCommands.delete(.generic) }),
        ("add-internet-password", { PasswordCommands.add(.internet) }),
        ("find-internet-password", { PasswordCommands.find(.internet) }),
        ("delete-internet-password", { PasswordCommands.delete(.internet) }),
        ("add-certificates", { CertificateCommands.add }),
        ("find-certificate", { CertificateCommands.find }),
        ("delete-certificate", { CertificateCommands.delete }),
        ("find-identity", { IdentityCommands.findIdentity }),
        ("verify-cert", { IdentityCommands.verifyCertificate }),
        ("create-keypair", { IdentityCommands.createKeypair }),
        ("register-application", { ApplicationCommands.register }),
        ("unregister-application", { ApplicationCommands.unregister }),
        ("list-applications", { ApplicationCommands.list }),
        ("access", { AccessCommands.command }),
        ("log", { LogCommand.command }),
        ("ssh-key", { SSHKeyCommands.command }),
        ("tpm", { TPMCommands.command }),
        ("dump-keychain", { DumpCommand.command }),
        ("export", { BackupCommands.export }),
        ("import", { BackupCommands.import_ }),
        ("backup", { SnapshotCommands.command }),
        ("doctor", { DoctorCommand.command }),
        ("desktop", { DesktopCommand.command }),
        ("sync", { SyncCommands.command }),
        ("completion", { ToolCommands.completion }),
        ("manual", { ToolCommands.manual }),
    ]

    /// Every command, built.
    static var commands: [Command] { commandTable.map { $0.command() } }

    static func command(named name: String) -> Command? { commandTable.first { $0.name == name }?.command() }

    /// Runs the tool as the `latchkey` process: with this process's arguments and environment, no core
    /// files (a crash must not write a passphrase or a secret to disk), and a process that makes itself not
    /// dumpable before it handles one. Returns the exit status.
    public static func main() -> Int32 {
        Processes.disableCoreDumps()
        let stderr = FileSink(FileDescriptor.standardError)
        do {
            // pam_latchkey runs the tool with another real group, so that it is not dumpable from its exec:
            // the tool's own group is taken back before anything else, which keeps it not dumpable.
            try Processes.adoptEffectiveGroup()
        } catch {
            stderr.line("latchkey: cannot take its effective group as its real group (\(error))")
            return exitStatus(for: .writePermission)
        }
        do {
            try Signals.exitQuietlyOnCrash(name: "latchkey")
        } catch {
            stderr.line("latchkey: warning: a crash could print memory that holds secrets (\(error))")
        }
        let raw = (1..<Int(CommandLine.argc)).map { index in
            CommandLine.unsafeArgv[index].map { argument -> [UInt8] in
                // The bytes as given (never `String(cString:)`, which would repair invalid UTF-8).
                var count = 0
                while argument[count] != 0 { count += 1 }
                return Array(UnsafeRawBufferPointer(start: argument, count: count))
            } ?? []
        }
        let arguments: [String]
        do {
            arguments = try decodeArguments(raw)
        } catch {
            stderr.line(
                "latchkey: \(raw.first.flatMap { String(validating: $0, as: UTF8.self) } ?? "latchkey"): \(error.message)"
            )
            return exitStatus(for: error.status)
        }
        return run(
            arguments, environment: CurrentProcess.environment, stdout: FileSink(FileDescriptor.standardOutput),
            stderr: stderr,
            interactive: true, guardsMemory: true, stderrIsTerminal: FileDescriptor.standardError.isTerminal)
    }

    /// The arguments as text; an argument that is not valid UTF-8 is `errSecParam` — never repaired into
    /// U+FFFD, which would make `$'\\xff'`, `$'\\xfe'` and "\u{FFFD}" one and the same account. Typed
    /// throws, not a `Result`: every start would otherwise pay the runtime's scan of all conformance records
    /// for `Result<[String], KeychainError>` (docs/DESIGN-NOTES.md, "The CLI's start").
    static func decodeArguments(_ raw: [[UInt8]]) throws(KeychainError) -> [String] {
        var arguments: [String] = []
        for (index, bytes) in raw.enumerated() {
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw KeychainError.param("argument \(index + 1) is not valid UTF-8")
            }
            arguments.append(text)
        }
        return arguments
    }

    /// Runs the tool with `arguments` (without the program name) in this process, without the hardening of
    /// `main()` (for embedding); output goes to the process's standard output and error.
    public static func main(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment)
        -> Int32
    {
        run(
            arguments, environment: environment, stdout: FileSink(FileDescriptor.standardOutput),
            stderr: FileSink(FileDescriptor.standardError),
            interactive: true, stderrIsTerminal: FileDescriptor.standardError.isTerminal)
    }

    /// Runs the tool capturing its output (no prompts): for tests and fuzzing.
    public static func capture(_ arguments: [String], environment: [String: String] = [:])
        -> (status: Int32, stdout: String, stderr: String)
    {
        let out = BufferSink()
        let err = BufferSink()
        let status = run(arguments, environment: environment, stdout: out, stderr: err, interactive: false)
        return (status, out.text, err.text)
    }

    /// Runs one command. The environment is read only once a command runs: the help and the version need
    /// none of it, and reading it is a good part of a start (docs/DESIGN-NOTES.md, "The CLI's start").
    static func run(
        _ arguments: [String], environment: @autoclosure () -> [String: String], stdout: any OutputSink,
        stderr: any OutputSink, interactive: Bool, guardsMemory: Bool = false, stderrIsTerminal: Bool = false
    ) -> Int32 {
        guard let first = arguments.first else {
            stderr.write(toolUsage)
            return usageStatus
        }
        if first == "-h" || first == "--help" || first == "help" {
            if arguments.count > 1 {
                guard let command = command(named: arguments[1]) else {
                    stderr.line("latchkey: help: there is no command \"\(arguments[1])\"")
                    return usageStatus
                }
                stdout.write(command.help)
            } else {
                stdout.write(toolUsage)
            }
            return 0
        }
        if first == "--version" {
            stdout.line("latchkey \(version)")
            return 0
        }
        guard let command = command(named: first) else {
            stderr.line("latchkey: unknown command \"\(first)\"; `latchkey help` lists the commands")
            return usageStatus
        }
        let context = CLIContext(
            environment: environment(), stdout: stdout, stderr: stderr, interactive: interactive,
            guardsMemory: guardsMemory, stderrIsTerminal: stderrIsTerminal)
        context.commandName = command.name
        do {
            let parsed = try command.parse(Array(arguments.dropFirst()))
            if parsed.has(.help) {
                stdout.write(command.help)
                return 0
            }
            guard command.positionals.contains(parsed.positionals.count) else {
                throw UsageError(
                    message: parsed.positionals.count > command.positionals.upperBound
                        ? "unexpected argument \"\(parsed.positionals[command.positionals.upperBound])\""
                        : "missing argument")
            }
            return try command.body(parsed, context)
        } catch let usage as UsageError {
            context.error(usage.message)
            stderr.line(command.usageLine)
            return usageStatus
        } catch let error as KeychainError {
            context.error(error.message)
            return exitStatus(for: error.status)
        } catch let failure as CommandFailure {
            context.error(failure.message)
            return failure.exitStatus
        } catch {
            context.error("\(error)")
            return 1
        }
    }

    /// The low byte of the status, as `security` exits (44 for errSecItemNotFound, 45 for a duplicate,
    /// 51 for a wrong passphrase); 1 when the low byte would read as success or as a usage error.
    public static func exitStatus(for status: KeychainStatus) -> Int32 {
        let low = Int32(UInt8(truncatingIfNeeded: status.rawValue))
        return low == 0 || low == usageStatus ? 1 : low
    }

    static let version = ProductVersion.number

    static var toolUsage: String {
        var lines = [
            "Usage: latchkey <command> [options] [keychain]",
            "",
            "Latchkey keeps passwords, tokens and keys in an encrypted keychain file, with the semantics of Apple's",
            "Keychain Services. The commands follow macOS `security`, so scripts written for it work with `latchkey`",
            "in its place. A command acts on the keychain named by its last argument (a path, or a name in",
            "\(KeychainLocation.directory())), else on $LATCHKEY_KEYCHAIN, else on the default keychain.",
            "The passphrase is asked for on the terminal; --passphrase-fd, --passphrase-file and",
            "$LATCHKEY_PASSPHRASE (the least safe) supply it without one.",
            "",
            "Commands:",
        ]
        let width = commands.map(\.name.count).max() ?? 0
        for command in commands {
            lines.append(
                "  " + command.name.padded(to: width) + "  " + command.summary)
        }
        lines += [
            "",
            "Credential helpers on the same keychain: git-credential-latchkey (`git config --global credential.helper",
            "latchkey`) and docker-credential-latchkey (`\"credsStore\": \"latchkey\"` in ~/.docker/config.json); each",
            "explains itself with --help.",
            "", "`latchkey help <command>` or `latchkey <command> --help` explains a command in full;",
            "`latchkey --version` prints the version.",
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}
