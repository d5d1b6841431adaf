import FoundationEssentials
import LatchkeyEngine

/// The agent when it serves the keychain and this program, else the keychain opened in this process
/// (`AgentRouting` decides, once per connection). A request the agent cannot answer because it went away
/// (`errSecNotAvailable`) is answered in this process instead, and so is every request of a program the
/// agent does not know — after the first, without asking the agent.
struct AutomaticService: KeychainService {
    let path: String
    let embedded: EmbeddedService

    /// `body` through the agent or here. `listedRead` (a find): a program the agent does not serve still asks
    /// it first while the keychain is not open here, since an item's access list may name it (issue 53).
    private func run<T>(listedRead: Bool = false, _ body: (any KeychainService) throws(KeychainError) -> T)
        throws(KeychainError) -> T
    {
        guard let client = try AgentRouting.client(for: path) else { return try body(embedded) }
        if let kept = AgentRouting.keptRoute(for: path, client: client) {
            // Decided on this connection already: the agent does not serve this program.
            if case .refused(let reason) = kept.standing { throw KeychainError(.missingEntitlement, reason) }
            if listedRead && !embedded.isOpen {
                do {
                    return try body(AgentKeychainService(client: client))
                } catch  where error.status == .missingEntitlement {
                    // Not on any list of a matching item: the keychain opened here, as before.
                }
            }
            return try embedded(body, refusal: kept.refusal)
        }
        do {
            return try body(AgentKeychainService(client: client))
        } catch {
            switch error.status {
            case .notAvailable:
                AgentRouting.forget(path)
                return try body(embedded)
            case .missingEntitlement:
                // Refused: ask who the agent takes this program for (one request, kept for this connection). An
                // unregistered program opens the keychain here, now and on every later call.
                // A status that cannot be had leaves the caller's standing unknown: the refusal stands.
                guard let route = try? AgentRouting.route(for: path, refusal: error), route.standing == .unregistered
                else {
                    throw error
                }
                return try embedded(body, refusal: error)
            default:
                throw error
            }
        }
    }

    /// `body` on the keychain opened here, for a program the agent does not serve. When that fails too, the
    /// error says both why the agent refused and why the keychain could not be opened here (for want of a
    /// passphrase: the refusal's status, since registering is the usual remedy).
    private func embedded<T>(_ body: (any KeychainService) throws(KeychainError) -> T, refusal: KeychainError?)
        throws(KeychainError) -> T
    {
        do {
            return try body(embedded)
        } catch let fallback where !embedded.isOpen {
            let refused = refusal?.detail ?? "this program is not registered with the agent"
            throw KeychainError(
                fallback.status == .interactionNotAllowed ? .missingEntitlement : fallback.status,
                "\(refused); without the agent: \(fallback.detail ?? fallback.message)")
        }
    }

    func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        switch request {
        case .releaseHeldKey(let reference):
            try release(reference)
            return .none
        case .status:
            if let client = try AgentRouting.client(for: path) { return .status(try client.status()) }
            return try embedded.perform(.status)
        case .copyMatching:
            return try run(listedRead: true) { (service) throws(KeychainError) in try service.perform(request) }
        default:
            return try run { (service) throws(KeychainError) in try service.perform(request) }
        }
    }

    /// Never opens the keychain: a release runs when a `HeldKey` goes (from `HeldKeyReleases`' queue, where
    /// asking for the passphrase would be wrong), and an ephemeral key lives where it was made — in the agent, or in this
    /// process's keychain, open since it made the key. A key the agent made goes with the agent.
    private func release(_ reference: Data) throws(KeychainError) {
        if let client = try AgentRouting.client(for: path) {
            do throws(KeychainError) {
                return try AgentKeychainService(client: client).releaseHeldKey(reference)
            } catch {
                // Not the agent's (this program is not registered with it, or it went away): perhaps this
                // process's, below.
            }
        }
        guard embedded.isOpen else {
            throw KeychainError(.itemNotFound, "no keychain open in this process holds the key")
        }
        try embedded.releaseHeldKey(reference)
    }
}
