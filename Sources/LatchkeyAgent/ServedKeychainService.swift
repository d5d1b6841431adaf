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
    /// Who the access log says asked (nil: the caller logs itself, as the agent's socket does, or nothing is
    /// logged).
    var recorder: AccessRecorder?
    /// Why the caller may do what it does, for the access log.
    var reason = "its access groups"

    func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        defer { if request.changesItems { state.changed() } }
        guard let recorder else { return try local.perform(request) }
        return try recorder.perform(request, reason: reason) { (request) throws(KeychainError) in
            try local.perform(request)
        }
    }
}

extension AgentState {
    /// The keychain as `caller` sees it, through the agent's bookkeeping (`ServedKeychainService`); with
    /// `holderEnded`, an ephemeral held key made through it goes when that process ends.
    ///
    /// With `logged`, the service writes the access log as that caller (the Secret Service's and the SSH
    /// agent's requests; the agent's socket logs its own, which also reads through access lists).
    func service(
        for caller: CallerIdentity, holderEnded: (@Sendable () -> Bool)? = nil,
        logged: AccessLogEntry.Caller? = nil
    ) -> ServedKeychainService {
        var local = LocalKeychainService(database: keychain, caller: caller, presence: presence)
        local.holderEnded = holderEnded
        return ServedKeychainService(
            local: local, state: self, recorder: logged.flatMap { recorder(for: $0) })
    }

    /// The access log's writer for `caller`; nil when the agent keeps no log (`latchkeyd --no-access-log`).
    func recorder(for caller: AccessLogEntry.Caller) -> AccessRecorder? {
        accessLog ? AccessRecorder(keychain: keychain, caller: caller, log: log) : nil
    }
}
