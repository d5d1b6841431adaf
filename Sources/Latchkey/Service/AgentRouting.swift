import Foundation
package import LatchkeyEngine
import Synchronization

/// The one place that decides whether a program's requests go to the agent or to the keychain opened in
/// the program itself — for the friendly API, the SecItem functions and the command line alike.
///
/// The agent serves a program when it runs for that keychain (its socket passes the trust checks of
/// `AgentLocation`) and takes the program for a registered one — or cannot tell yet, before its first
/// unlock (then its answer, "not unlocked since it started", is the honest one). Every other program opens
/// the keychain itself, with the passphrase, exactly as when no agent runs.
package enum AgentRouting {
    private static let clients = Mutex<[String: AgentClient]>([:])

    /// The connection to the agent serving `path` (one per keychain per process), or nil when none does;
    /// `errSecWrPerm` when the socket found is not safe to use.
    package static func client(for path: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(KeychainError) -> AgentClient?
    {
        let key = URL(fileURLWithPath: path).standardizedFileURL.path
        if let cached = clients.withLock({ $0[key] }) { return cached }
        guard let client = try AgentClient.connect(keychainPath: key, environment: environment) else { return nil }
        clients.withLock { $0[key] = client }
        return client
    }

    /// Forgets the connection for `path` (the agent went away).
    package static func forget(_ path: String) {
        let key = URL(fileURLWithPath: path).standardizedFileURL.path
        clients.withLock { _ = $0.removeValue(forKey: key) }
    }

    /// Whether the agent serves a program it describes so.
    package static func serves(_ caller: CallerStanding) -> Bool {
        switch caller {
        case .registered, .unknownUntilFirstUnlock: true
        case .identified, .unregistered, .refused: false
        }
    }

    /// The agent for `path` when it serves this program, else nil (the caller opens the keychain itself). A
    /// refusal other than "unregistered" — a registered binary that changed — is reported, not routed around.
    /// `beforeFirstUnlock`: whether an agent that cannot tell yet (never unlocked) counts as serving; the
    /// command line, which can ask for the passphrase itself, says no.
    package static func agentServing(
        _ path: String, environment: [String: String] = ProcessInfo.processInfo.environment, beforeFirstUnlock: Bool = true
    ) throws(KeychainError) -> AgentKeychainService? {
        guard let client = try client(for: path, environment: environment) else { return nil }
        let status: KeychainServiceStatus
        do {
            status = try client.status()
        } catch KeychainError.notAvailable {
            forget(path)
            return nil
        }
        if case .refused(let reason) = status.caller { throw KeychainError(.missingEntitlement, reason) }
        if status.caller == .unknownUntilFirstUnlock && !beforeFirstUnlock { return nil }
        return serves(status.caller) ? AgentKeychainService(client: client) : nil
    }
}
