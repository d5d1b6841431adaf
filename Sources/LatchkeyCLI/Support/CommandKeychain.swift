import FoundationEssentials
import Latchkey
import LatchkeyPOSIX

/// Where an item command's operations go: the agent (when it runs and this program is registered with it)
/// or the keychain opened here (unlocked only when an item needs it). `AgentRouting` decides.
struct CommandKeychain {
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
    ) throws -> CommandKeychain {
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
            return CommandKeychain(service: agent, unlock: nil)
        }
        context.protectMemory()
        let keychain = try KeychainDatabase.open(at: path)
        let service = LocalKeychainService(
            database: keychain, caller: commandLineCaller(group: group, environment: context.environment),
            presence: TerminalPresence())
        return CommandKeychain(service: service) {
            _ = try context.unlock(
                keychain, arguments: arguments, prompt: "password to unlock \(context.keychainName(named)): ")
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
    if let client = try AgentAccess.client(for: path, context: context) {
        return (AgentKeychainService(client: client), true)
    }
    return (
        LocalKeychainService(
            database: try KeychainDatabase.open(at: path),
            caller: commandLineCaller(group: nil, environment: context.environment)), false
    )
}
