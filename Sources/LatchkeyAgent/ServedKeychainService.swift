import LatchkeyEngine

/// The agent's bookkeeping around the seam, which every front end's requests go through — the agent's own
/// socket, the Secret Service, the secret portal and the SSH agent: a `KeychainRequest` run by
/// `LocalKeychainService` for one caller, then what it means for the agent. A change to items tells
/// background sync at once, so a `secret-tool store` reaches the other devices as soon as a write through the
/// agent's socket does, rather than at the change feed's next poll.
struct ServedKeychainService: KeychainService {
    /// The engine's service for the caller.
    let local: LocalKeychainService
    /// The agent, for its bookkeeping.
    let state: AgentState

    func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        defer { if request.changesItems { state.changed() } }
        return try local.perform(request)
    }
}

extension AgentState {
    /// The keychain as `caller` sees it, through the agent's bookkeeping (`ServedKeychainService`); with
    /// `holderEnded`, an ephemeral held key made through it goes when that process ends.
    func service(for caller: CallerIdentity, holderEnded: (@Sendable () -> Bool)? = nil) -> ServedKeychainService {
        var local = LocalKeychainService(database: keychain, caller: caller, presence: presence)
        local.holderEnded = holderEnded
        return ServedKeychainService(local: local, state: self)
    }
}
