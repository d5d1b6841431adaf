import FoundationEssentials
import Latchkey
import LatchkeyPOSIX

/// Where a command's output goes. The real tool writes to the process's standard streams; tests and the
/// fuzzer capture it.
protocol OutputSink: AnyObject {
    func write(_ data: Data)
    func write(_ text: String)
}

extension OutputSink {
    func line(_ text: String) { write(text + "\n") }
}

/// Standard output or standard error of this process.
final class FileSink: OutputSink {
    private let descriptor: FileDescriptor
    init(_ descriptor: FileDescriptor) { self.descriptor = descriptor }

    func write(_ data: Data) { write(bytes: Array(data)) }
    func write(_ text: String) { write(bytes: Array(text.utf8)) }

    /// Writes all of `bytes`. Output that cannot be written (a full disk, a closed terminal) ends the tool
    /// with EX_IOERR (74) rather than let it report success for output it lost; a closed pipe ends it by
    /// SIGPIPE before that, as it ends any Unix tool.
    private func write(bytes: [UInt8]) {
        do throws(Errno) {
            try descriptor.writeAll(bytes)
        } catch {
            // Standard error may be the stream that failed: then there is no one left to tell.
            StandardError.write("latchkey: cannot write to \(descriptor): \(error)\n")
            CurrentProcess.exit(74)
        }
    }
}

/// Collects output in memory.
final class BufferSink: OutputSink {
    private(set) var data = Data()
    func write(_ data: Data) { self.data.append(data) }
    func write(_ text: String) { data.append(contentsOf: text.utf8) }
    var text: String { String(decoding: data, as: UTF8.self) }
}

/// A failure that is not a keychain status: the message and the exit status.
struct CommandFailure: Error {
    let message: String
    var exitStatus: Int32 = 1
}

/// Everything a command needs from the outside world.
final class CLIContext {
    let environment: [String: String]
    let stdout: any OutputSink
    let stderr: any OutputSink
    /// Whether prompts may be shown (a terminal exists); tests and the fuzzer set false.
    let interactive: Bool
    /// Standard error when it is a terminal, where long work draws its progress; nil otherwise.
    let progressTerminal: (any OutputSink)?
    /// The command being run (for messages).
    var commandName = "latchkey"
    /// Whether this is the real `latchkey` process, which makes itself not dumpable before it handles a
    /// passphrase or a secret (tests and the fuzzer run commands in their own process and set false).
    let guardsMemory: Bool
    private var memoryProtected = false

    init(
        environment: [String: String], stdout: any OutputSink, stderr: any OutputSink, interactive: Bool,
        guardsMemory: Bool = false, stderrIsTerminal: Bool = false
    ) {
        self.environment = environment
        self.stdout = stdout
        self.stderr = stderr
        self.interactive = interactive
        self.progressTerminal = stderrIsTerminal ? stderr : nil
        self.guardsMemory = guardsMemory
    }

    /// Makes the process not dumpable (once), as gpg does: no other process of the user can read the
    /// passphrase or a secret out of its memory. Called before the first passphrase or secret is read — and
    /// after the agent has identified this program, since the agent cannot look at a process that is not
    /// dumpable (core files are off from the start: see `LatchkeyCommandLine.main`).
    func protectMemory() {
        guard guardsMemory, !memoryProtected else { return }
        memoryProtected = true
        do {
            try Processes.setNotDumpable()
        } catch {
            warning("cannot protect this process's memory from other processes (\(error))")
        }
    }

    /// `latchkey: <command>: <message>` on standard error.
    func error(_ message: String) { stderr.line("latchkey: \(commandName): \(message)") }

    /// `latchkey: <command>: warning: <message>` on standard error.
    func warning(_ message: String) { stderr.line("latchkey: \(commandName): warning: \(message)") }

    /// The warning for a passphrase given as `option`'s value: every process of every user can read it in the
    /// process list while the command runs; `safe` names what to use instead.
    func warnVisiblePassphrase(_ option: String, safe: String) {
        warning(
            "a passphrase given with \(option) is visible to every process in the process list (ps); use \(safe) instead"
        )
    }

    /// The keychain a command acts on: the trailing argument (a path, or a name in the keychain directory),
    /// else `LATCHKEY_KEYCHAIN`, else the default keychain.
    func keychainPath(_ argument: String?) -> String {
        if let argument { return KeychainLocation.resolve(argument, environment: environment) }
        return KeychainLocation.defaultPath(environment: environment)
    }

    /// How a prompt names the keychain a command acts on: the argument as given, else `LATCHKEY_KEYCHAIN` as
    /// set, else "default" (as `security` says "password to unlock default:").
    func keychainName(_ argument: String?) -> String {
        if let argument { return argument }
        if let named = environment[KeychainLocation.keychainVariable], !named.isEmpty { return named }
        return "default"
    }

    /// What supplies the keychain passphrase without a terminal.
    static let passphraseAlternatives = "--passphrase-fd, --passphrase-file, or \(PassphraseSource.environmentVariable)"

    /// Reads a hidden line on the terminal, or fails with errSecInteractionNotAllowed when there is none,
    /// naming `alternatives`: what gives the same answer without a terminal.
    func prompt(_ text: String, alternatives: String = passphraseAlternatives) throws -> [UInt8] {
        protectMemory()
        guard interactive, let bytes = Terminal.readHidden(prompt: text) else {
            throw KeychainError(.interactionNotAllowed, "no terminal to prompt on; use \(alternatives)")
        }
        return bytes
    }

    /// The keychain passphrase from `--passphrase-fd`, `--passphrase-file`, `LATCHKEY_PASSPHRASE`, or a prompt.
    func passphrase(_ arguments: ParsedArguments, prompt text: String) throws -> Passphrase {
        protectMemory()
        if let fd = arguments.value(.passphraseFD) {
            guard let descriptor = Int32(fd), descriptor >= 0 else {
                throw UsageError(message: "--passphrase-fd needs a file descriptor number, not '\(fd)'")
            }
            return try PassphraseSource.fileDescriptor(descriptor).read()
        }
        if let file = arguments.value(.passphraseFile) { return try PassphraseSource.keyFile(file).read() }
        if environment[PassphraseSource.environmentVariable] != nil {
            return try PassphraseSource.environment.read(environment: environment)
        }
        var typed = try prompt(text)
        defer { wipe(&typed) }
        return Passphrase(bytes: typed)
    }

    /// Opens the keychain at `path` and unlocks it.
    func openUnlocked(_ path: String, displayName: String, arguments: ParsedArguments) throws -> KeychainDatabase {
        try openUnlockedConfirming(path, displayName: displayName, arguments: arguments).keychain
    }

    /// `openUnlocked`, and the user's confirmation for items whose access control asks for it: the
    /// passphrase just given to unlock is the proof a prompt would ask for, so a command that reads every
    /// secret (export, dump-keychain -d) asks once, not once per protected item.
    func openUnlockedConfirming(_ path: String, displayName: String, arguments: ParsedArguments) throws
        -> (keychain: KeychainDatabase, confirmation: any UserPresenceVerifier)
    {
        let keychain = try KeychainDatabase.open(at: path)
        guard let given = try unlock(keychain, arguments: arguments, prompt: "password to unlock \(displayName): ")
        else {
            return (keychain, TerminalPresence())  // Opened unattended: protected items ask on the terminal.
        }
        return (keychain, UnlockPassphraseConfirmation(passphrase: given))
    }

    /// Whether the passphrase comes from somewhere other than the terminal (an option or the environment).
    func hasPassphraseSource(_ arguments: ParsedArguments) -> Bool {
        arguments.has(.passphraseFD) || arguments.has(.passphraseFile)
            || environment[PassphraseSource.environmentVariable] != nil
    }

    /// Unlocks `keychain`: through its unattended TPM unlock when it has one and no passphrase is given (a
    /// service at boot), else with the passphrase, which it returns.
    func unlock(_ keychain: KeychainDatabase, arguments: ParsedArguments, prompt text: String) throws -> Passphrase? {
        if !hasPassphraseSource(arguments), !(try keychain.unattendedPCRs).isEmpty {
            // After a PCR change the refusal is the answer: it says to give the passphrase or the recovery code.
            try keychain.unlockUnattended()
            return nil
        }
        let given = try passphrase(arguments, prompt: text)
        try keychain.unlock(with: given)
        return given
    }
}

/// Overwrites bytes that held a passphrase or a secret.
func wipe(_ bytes: inout [UInt8]) {
    bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
}

/// Overwrites data that held a passphrase or a secret.
func wipe(_ data: inout Data) { data.resetBytes(in: 0..<data.count) }

/// Options every command that unlocks a keychain accepts.
let passphraseOptions = [
    OptionSpec(
        .passphraseFD, .required, value: "fd",
        "Read the keychain passphrase from this open file descriptor (one line)."),
    OptionSpec(
        .passphraseFile, .required, value: "path",
        "Read the keychain passphrase from the first line of this file, which must not be readable by others."),
]

/// The caller the command-line tool acts as: it holds the keychain passphrase, so it sees every access
/// group; items it adds go to `--access-group`, else `LATCHKEY_APPLICATION_ID`, else "latchkey".
func commandLineCaller(group: String?, environment: [String: String]) -> CallerIdentity {
    let own = group ?? environment["LATCHKEY_APPLICATION_ID"].flatMap { $0.isEmpty ? nil : $0 } ?? "latchkey"
    return CallerIdentity(applicationIdentifier: "latchkey", accessGroups: [own, CallerIdentity.wildcardGroup])
}

/// Confirms with the passphrase the user gave to unlock the keychain for this command (see
/// `openUnlockedConfirming`); `verify` still checks it against the keychain.
struct UnlockPassphraseConfirmation: UserPresenceVerifier {
    let passphrase: Passphrase

    func confirm(_ request: PresenceRequest, verify: (Passphrase) throws(KeychainError) -> Void) throws(KeychainError) {
        try verify(passphrase)
    }
}
