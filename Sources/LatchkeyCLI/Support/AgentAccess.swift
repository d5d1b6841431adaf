import Foundation
import Latchkey
import LatchkeyPOSIX

/// The CLI's use of the agent: find it, start it on demand, and decide whether item commands go through it.
enum AgentAccess {
    /// A connection to the agent serving `path`, or nil when none runs; `errSecWrPerm` when the socket found
    /// is not safe to send anything to (see `AgentLocation`).
    static func client(for path: String, context: CLIContext) throws -> AgentClient? {
        try AgentRouting.client(for: path, environment: context.environment)
    }

    /// The agent executable: beside this one, else on the PATH.
    static func agentExecutable(context: CLIContext) -> String? {
        // No /proc (or an unreadable link): the path this program was started by is the next best guess.
        let own = Processes.executablePath(of: CurrentProcess.id) ?? CommandLine.arguments[0]
        let beside = URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("latchkeyd").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        for directory in (context.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(directory)/latchkeyd"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Variables the agent must never start with: it gets the passphrase over its socket, once.
    static let secretVariables = [PassphraseSource.environmentVariable, "LATCHKEY_BACKUP_PASSPHRASE"]

    /// Starts `latchkeyd` for `path` in its own session (detached from this terminal, holding none of this
    /// command's descriptors, without the passphrase variables) and waits for it to listen.
    static func start(for path: String, context: CLIContext) throws -> AgentClient {
        guard let executable = agentExecutable(context: context) else {
            throw CommandFailure(message: "latchkeyd was not found beside latchkey or on the PATH")
        }
        let environment = context.environment.filter { !secretVariables.contains($0.key) }
        let pid: Int32
        do {
            // The agent outlives this command: it must not keep any of its descriptors (a parent waiting for
            // this command's output, or for its end, would wait for the agent's).
            pid = try Spawn.start(executable, ["--keychain", path], environment: environment,
                                  options: Spawn.Options(newSession: true, closeInheritedDescriptors: true))
        } catch {
            throw CommandFailure(message: "cannot start \(executable): \(error)")
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let client = try client(for: path, context: context) { return client }
            if case .exited(let status)? = Spawn.poll(pid) {
                throw CommandFailure(message: "latchkeyd exited at once (status \(status)); run it with --verbose to see why")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw CommandFailure(message: "latchkeyd did not start listening within 10 seconds")
    }
}

/// Where an item command's operations go: the agent (when it runs and this program is registered with it)
/// or the keychain opened here (unlocked only when an item needs it). `AgentRouting` decides.
struct ItemStore {
    let service: any KeychainService
    /// Unlocks the embedded keychain (asking for the passphrase); nil through the agent, which is unlocked
    /// or not by `unlock-keychain`.
    let unlock: (() throws -> Void)?

    /// Where a command names its keychain: its first positional argument (most commands), or an option
    /// (`add-certificates -k`, whose positional arguments are files); nil for the default keychain.
    enum KeychainArgument {
        case firstPositional
        case option(String?)
    }

    static func open(
        _ arguments: ParsedArguments, context: CLIContext, group: String?, keychain: KeychainArgument = .firstPositional
    ) throws -> ItemStore {
        let named: String?
        switch keychain {
        case .firstPositional: named = arguments.positionals.first
        case .option(let value): named = value
        }
        let path = context.keychainPath(named)
        // An agent that cannot answer its status (going away, an old protocol) is not used: the CLI opens the
        // keychain itself, with the same results and statuses.
        if let agent = try AgentRouting.agentServing(path, environment: context.environment, beforeFirstUnlock: false) {
            context.protectMemory()  // Identified by the agent already: from now on no one may look inside.
            return ItemStore(service: agent, unlock: nil)
        }
        context.protectMemory()
        let keychain = try KeychainDatabase.open(at: path)
        let service = LocalKeychainService(database: keychain, caller: commandLineCaller(group: group, environment: context.environment),
                                           presence: TerminalPresence())
        return ItemStore(service: service) {
            _ = try context.unlock(keychain, arguments: arguments, prompt: "password to unlock \(context.keychainName(named)): ")
        }
    }

    /// Runs `body`; when the keychain here is locked for it, unlocks and runs it again.
    func run<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as KeychainError where error.status == .interactionNotAllowed && unlock != nil {
            try unlock!()
            return try body()
        }
    }
}

/// The service a keychain command (lock, unlock, settings, registrations) uses: the agent when one serves
/// `path` (whoever this program is: these requests need only the user, or the passphrase), else the
/// keychain opened here as the command line.
func administration(_ path: String, context: CLIContext) throws -> (service: any KeychainService, agent: Bool) {
    if let client = try AgentAccess.client(for: path, context: context) { return (AgentKeychainService(client: client), true) }
    return (LocalKeychainService(database: try KeychainDatabase.open(at: path),
                                 caller: commandLineCaller(group: nil, environment: context.environment)), false)
}
