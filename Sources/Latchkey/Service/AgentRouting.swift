import FoundationEssentials
package import LatchkeyEngine
import LatchkeyPOSIX
import Synchronization

/// The one place that decides whether a program's requests go to the agent or to the keychain opened in
/// the program itself — for the friendly API, the SecItem functions and the command line alike.
///
/// The agent serves a program when it runs for that keychain (its socket passes the trust checks of
/// `AgentLocation`) and takes the program for a registered one — or cannot tell yet, before its first
/// unlock (then its answer, "not unlocked since it started", is the honest one). Every other program opens
/// the keychain itself, with the passphrase, exactly as when no agent runs.
///
/// The decision is made once per connection to the agent and kept (`Route`): a program the agent does not
/// serve is refused once, and from then on goes straight to the keychain it opened, without asking. The
/// decision is dropped when the connection goes (`errSecNotAvailable`: the agent stopped or restarted) and
/// when the registrations change — the agent then closes the connections of the programs it refused, which
/// the kept decision notices (`AgentClient.agentClosedConnection`, no request) before it is used again. A
/// program the agent serves keeps no decision: the agent's refusal of any request sends it back here.
package enum AgentRouting {
    private static let clients = Mutex<[String: AgentClient]>([:])
    private static let routes = Mutex<[String: Route]>([:])

    /// Where a keychain's requests from this program go, as decided on one connection.
    package struct Route: Sendable {
        /// The connection the decision was made on.
        package let client: AgentClient
        /// Who the agent takes this program for.
        package let standing: CallerStanding
        /// Why the agent refuses this program's item requests, when it does (an unregistered program): its
        /// own words, kept to explain a failure of the keychain opened here.
        package let refusal: KeychainError?

        /// Whether the agent serves this program's item requests.
        package var agentServes: Bool { standing.agentServes }
    }

    /// The connection to the agent serving `path` (one per keychain per process), or nil when none does;
    /// `errSecWrPerm` when the socket found is not safe to use.
    package static func client(for path: String, environment: [String: String] = CurrentProcess.environment)
        throws(KeychainError) -> AgentClient?
    {
        let key = normalized(path)
        if let cached = clients.withLock({ $0[key] }) { return cached }
        guard let client = try AgentClient.connect(keychainPath: key, environment: environment) else { return nil }
        clients.withLock { $0[key] = client }
        return client
    }

    /// Forgets the connection for `path` (the agent went away), and the decision made on it.
    package static func forget(_ path: String) {
        let key = normalized(path)
        clients.withLock { _ = $0.removeValue(forKey: key) }
        routes.withLock { _ = $0.removeValue(forKey: key) }
    }

    /// The decision kept for `path` on `client`'s connection, when the agent does not serve this program and
    /// nothing has changed since (the agent closes such connections when its registrations change); nil when
    /// there is none — the caller then asks the agent.
    package static func keptRoute(for path: String, client: AgentClient) -> Route? {
        let key = normalized(path)
        guard let kept = routes.withLock({ $0[key] }), kept.client === client, !kept.agentServes else { return nil }
        if client.agentClosedConnection() {
            routes.withLock { _ = $0.removeValue(forKey: key) }
            return nil
        }
        return kept
    }

    /// A new decision for `path` from the agent's status (one request), kept while the agent does not serve
    /// this program; nil when no agent serves the keychain. `refusal`: the agent's refusal of the request that
    /// made the caller ask, kept to explain later failures of the keychain opened here.
    package static func route(
        for path: String, environment: [String: String] = CurrentProcess.environment,
        refusal: KeychainError? = nil
    ) throws(KeychainError) -> Route? {
        let key = normalized(path)
        guard let client = try client(for: key, environment: environment) else { return nil }
        let status: KeychainServiceStatus
        do {
            status = try client.status()
        } catch KeychainError.notAvailable {
            forget(key)
            return nil
        }
        let route = Route(client: client, standing: status.caller, refusal: refusal)
        routes.withLock { $0[key] = route.agentServes ? nil : route }
        return route
    }

    /// The agent for `path` when it serves this program, else nil (the caller opens the keychain itself). A
    /// refusal other than "unregistered" — a registered binary that changed — is reported, not routed around.
    /// `beforeFirstUnlock`: whether an agent that cannot tell yet (never unlocked) counts as serving; the
    /// command line, which can ask for the passphrase itself, says no.
    package static func agentServing(
        _ path: String, environment: [String: String] = CurrentProcess.environment,
        beforeFirstUnlock: Bool = true
    ) throws(KeychainError) -> AgentKeychainService? {
        guard let route = try route(for: path, environment: environment) else { return nil }
        if case .refused(let reason) = route.standing { throw KeychainError(.missingEntitlement, reason) }
        if route.standing == .unknownUntilFirstUnlock && !beforeFirstUnlock { return nil }
        return route.agentServes ? AgentKeychainService(client: route.client) : nil
    }

    private static func normalized(_ path: String) -> String { FileSystem.standardizedPath(path) }
}
