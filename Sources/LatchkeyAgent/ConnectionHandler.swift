import FoundationEssentials
import LatchkeyCaller
import LatchkeyCrypto
import LatchkeyEngine
import LatchkeyPKI
import LatchkeyPOSIX
import LatchkeyProtocol

/// Serves one client connection on its own thread: identifies the peer, greets it with a challenge, then
/// answers its requests in order (`AgentConversation`). A malformed, oversized, truncated or out-of-order
/// message gets an error response and the connection is closed; a message from any process but the one that
/// connected is not answered at all. The agent and every other client carry on.
struct ConnectionHandler {
    let stream: AgentStream
    let state: AgentState
    let budget: ByteBudget
    let log: @Sendable (String) -> Void
    /// Called once the client has said hello (the connection then counts as in use, not as a stranger).
    let greeted: @Sendable () -> Void
    /// Called at every request, for the idle timeout and for choosing which connection to close when full.
    let active: @Sendable () -> Void
    /// Called when the agent tells this program it does not serve it (a refused item request, a status that
    /// says unregistered or refused): the client then opens the keychain itself without asking again, so its
    /// connection is closed when the registrations change (see `registrationsChanged`).
    let refused: @Sendable () -> Void
    /// Called after this connection changed the registrations: the agent closes the connections of programs
    /// it refused, whose clients then ask again (docs: AgentRouting).
    let registrationsChanged: @Sendable () -> Void
    /// An idle connection is closed after this long (the client reconnects on its next request).
    static let idleSeconds = 600

    /// Identifies the peer, greets it and answers its requests until the connection ends — all on the
    /// connection's own thread: identifying a program the agent has not seen digests its executable, which
    /// must not hold up the connections accepted after it.
    func run() {
        guard let conversation = AgentConversation(stream: stream, budget: budget, digests: state.digests, log: log)
        else { return }
        let caller = conversation.caller
        let peer = caller.peer
        let sender = conversation.sender
        conversation.run(idleSeconds: Self.idleSeconds, greeted: greeted) { request, id in
            state.touch()
            active()
            if request.needsIdentity, let mismatch = peer.mismatch(sender: sender, digests: state.digests) {
                log("refused pid \(peer.pid): \(mismatch); closing the connection")
                return nil  // Not answered: the answer could reach another program than the one identified.
            }
            return respond(to: request, id: id, caller: caller)
        }
    }

    func respond(to request: AgentRequest, id: UInt32, caller: AttestedCaller) -> AgentResponse {
        do throws(KeychainError) {
            return AgentResponse(
                id: id, operation: request.operation, outcome: .success(try perform(request, caller: caller)))
        } catch {
            return AgentResponse(id: id, operation: request.operation, failure: error)
        }
    }

    /// Runs a request: the agent's own (hello, the unattended unlock) here; a keychain request through the
    /// seam — item requests in the service of the peer's registration, the rest in the agent's own, with the
    /// agent's bookkeeping around them (the throttle on every passphrase, registrations and settings applied
    /// at once, background sync told of changes).
    private func perform(_ request: AgentRequest, caller: AttestedCaller) throws(KeychainError) -> KeychainReply {
        switch request {
        case .hello(let path, _):
            try AgentConversation.checkHello(path: path, servedPath: state.keychainPath)
            return .none
        case .unlockUnattended:
            try state.unlockUnattended()
            return .none
        case .unlockDerived(let key):
            // A derived key skips the Argon2id an unlock's guess costs the agent: only the login's hand-over
            // (root, to an agent that is not) may use it; anyone else has the passphrase's unlock.
            guard state.throttleBucket(for: caller) == .login else {
                throw KeychainError(
                    .missingEntitlement, "only the login's hand-over (pam_latchkey, as root) unlocks with a derived key"
                )
            }
            try state.unlock(key)
            return .none
        case .keychain(let request):
            return try perform(request, caller: caller)
        }
    }

    private func perform(_ request: KeychainRequest, caller: AttestedCaller) throws(KeychainError) -> KeychainReply {
        let peer = caller.peer
        switch request {
        case .status:
            return .status(status(caller))
        case .unlock(let passphrase):
            try state.unlock(passphrase, as: state.throttleBucket(for: caller))
            return .none
        case .lock:
            state.lock(reason: "requested by pid \(peer.pid)")
            return .none
        case .listRegistrations:
            // Who else the agent serves, and as what, is for registered programs only (`latchkey
            // list-applications` from any other program opens the keychain with the passphrase).
            guard let registrations = state.currentRegistrations else { throw notYetUnlocked }
            _ = try registeredStanding(caller, for: "the list of registered programs")
            return .registrations(registrations)
        case .settings:
            _ = try registeredStanding(caller, for: "the keychain's settings")
            return try state.administration.perform(request)
        case .register:
            let reply = try state.checkingPassphrase("a registration", as: state.throttleBucket(for: caller)) {
                () throws(KeychainError) in
                try state.administration.perform(request)
            }
            try state.reloadRegistrationsIfReadable()
            if case .registration(let registration) = reply { log("registered \(registration)") }
            registrationsChanged()
            return reply
        case .unregister:
            let reply = try state.checkingPassphrase("an unregistration", as: state.throttleBucket(for: caller)) {
                () throws(KeychainError) in
                try state.administration.perform(request)
            }
            try state.reloadRegistrationsIfReadable()
            if reply == .flag(true) { registrationsChanged() }
            return reply
        case .updateSettings(let settings, _):
            let reply = try state.checkingPassphrase("a change of settings", as: state.throttleBucket(for: caller)) {
                () throws(KeychainError) in
                try state.administration.perform(request)
            }
            state.apply(settings)
            return reply
        case .accessLists:
            // What other programs may read is for registered programs (`latchkey access list` from any other
            // program opens the keychain with the passphrase), as the registrations are.
            _ = try registeredStanding(caller, for: "items' access lists")
            return try state.administration.perform(request)
        case .grantAccess(let program, _, _), .revokeAccess(let program, _, _):
            let granting: Bool
            if case .grantAccess = request { granting = true } else { granting = false }
            let reply = try state.checkingPassphrase(
                granting ? "a grant of access" : "a revocation of access", as: state.throttleBucket(for: caller)
            ) { () throws(KeychainError) in
                try state.administration.perform(request)
            }
            if reply == .flag(true) {
                log("\(granting ? "granted" : "revoked") access to an item for \(program) (by pid \(peer.pid))")
            }
            return reply
        case .copyMatching:
            let groups = { (request: KeychainRequest) throws(KeychainError) -> KeychainReply in
                try service(caller).perform(request)
            }
            guard let recorder = state.recorder(for: AccessLogEntry.Caller(caller)) else {
                return try served(request, caller: caller).0
            }
            return try recorder.perform(request, listing: groups) { (request) throws(KeychainError) in
                try served(request, caller: caller)
            }
        case .createHeldKey(let held, _):
            // An ephemeral key goes when the process it was made for ends.
            let made = try logged(request, caller: caller) { (request) throws(KeychainError) in
                try service(caller, holderEnded: peer.hasEnded).perform(request)
            }
            log(
                "made a key held by the agent for pid \(peer.pid) (\(held.type == .rsa ? "RSA" : "EC") \(held.bits) bits)"
            )
            return made
        case .add, .locate, .update, .delete, .addOrUpdate, .copyIdentities, .useHeldKey,
            .releaseHeldKey, .importHeldKey:
            return try logged(request, caller: caller) { (request) throws(KeychainError) in
                try service(caller).perform(request)
            }
        }
    }

    /// Runs an item request in the caller's groups, writing the access log (unless the agent keeps none).
    private func logged(
        _ request: KeychainRequest, caller: AttestedCaller,
        _ serve: (KeychainRequest) throws(KeychainError) -> KeychainReply
    ) throws(KeychainError) -> KeychainReply {
        guard let recorder = state.recorder(for: AccessLogEntry.Caller(caller)) else { return try serve(request) }
        return try recorder.perform(request, reason: "its access groups", serve)
    }

    /// A find (`served` runs any other request in the caller's groups), and how it was allowed.
    private func served(_ request: KeychainRequest, caller: AttestedCaller) throws(KeychainError) -> (
        KeychainReply, String
    ) {
        guard case .copyMatching(let query) = request else {
            return (try service(caller).perform(request), "its access groups")
        }
        return try copyMatching(query, caller: caller)
    }

    /// A read: in the caller's access groups first; when they hold no match, or the agent does not serve the
    /// caller's groups at all (an unregistered program), among the items whose access lists name the caller
    /// (`CallerPolicy.program(of:identity:)`). What the groups' read threw stands when no listed item
    /// matches either, so an unregistered program still hears that the agent does not serve it. Says how
    /// the read was allowed.
    private func copyMatching(_ query: ItemQuery, caller: AttestedCaller) throws(KeychainError) -> (
        KeychainReply, String
    ) {
        let refusal: KeychainError
        do {
            return (try service(caller).perform(.copyMatching(query)), "its access groups")
        } catch {
            refusal = error
        }
        guard refusal.status == .itemNotFound || refusal.status == .missingEntitlement,
            state.currentRegistrations != nil,
            let program = CallerPolicy.program(of: caller, identity: state.programIdentity)
        else { throw refusal }
        do {
            return (
                .items(try state.keychain.copyMatching(query, listedFor: program, presence: state.presence)),
                "the item's access list"
            )
        } catch {
            guard error.status == .itemNotFound else { throw error }
        }
        guard let asked = try askTheUser(query, program: program, caller: caller, refusal: refusal) else {
            throw refusal
        }
        return asked
    }

    /// The question (`AccessPrompter`): the first item `query` matches in any group, which the caller may not
    /// read — named, never read, until the user allows it — and then, allowed once or always, that item read
    /// as the query asks. Nil when no item matches at all, or the caller is never asked: it holds the
    /// wildcard group (it sees every group, so nothing is kept from it), or it is a registered program whose
    /// executable changed (its refusal says to register it again). Throws the refusal when the user
    /// denies, or cannot or may not be asked.
    private func askTheUser(_ query: ItemQuery, program: TrustedProgram, caller: AttestedCaller, refusal: KeychainError)
        throws(KeychainError) -> (KeychainReply, String)?
    {
        if let registrations = state.currentRegistrations {
            switch CallerPolicy.standing(of: caller, registrations: registrations, identity: state.programIdentity) {
            case .registered(let registration) where registration.caller.hasWildcard: return nil
            case .refused: return nil  // A registered program that changed: registering it again is the remedy.
            default: break
            }
        }
        var find = query
        find.returning = .attributes
        find.limit = .one
        let candidate: ItemResult
        do {
            guard let found = try state.keychain.copyMatching(find, caller: AgentState.everyGroup).first else {
                return nil
            }
            candidate = found
        } catch {
            return nil  // Nothing to ask about (nothing matches, or what matches cannot be read now).
        }
        let answer = try state.askAccess(
            program, pid: caller.pid, reference: candidate.persistentReference, itemClass: candidate.itemClass,
            names: ItemAccessList.summary(of: candidate.attributes),
            storedBy: candidate.attributes[.accessGroup]?.stringValue, refusal: refusal)
        var one = query
        one.persistentReference = candidate.persistentReference
        one.limit = .one
        let items = try state.keychain.copyMatching(one, caller: AgentState.everyGroup, presence: state.presence)
        return (
            .items(items), answer == .alwaysAllow ? "the user's answer: always allow" : "the user's answer: allow once"
        )
    }

    private var notYetUnlocked: KeychainError {
        KeychainError(
            .interactionNotAllowed,
            "the agent has not been unlocked since it started (application registrations are sealed under the passphrase)"
        )
    }

    /// The service a caller's item requests run in: its registration's identity, through the agent's
    /// bookkeeping (`ServedKeychainService`).
    private func service(_ caller: AttestedCaller, holderEnded: (@Sendable () -> Bool)? = nil) throws(KeychainError)
        -> ServedKeychainService
    {
        let registration = try registeredStanding(caller, for: "an item request")
        return state.service(for: registration.caller, holderEnded: holderEnded)
    }

    /// The caller's registration, or the refusal (logged) an unregistered, unidentified or refused caller gets
    /// for `what`.
    private func registeredStanding(_ caller: AttestedCaller, for what: String) throws(KeychainError)
        -> ApplicationRegistration
    {
        guard let registrations = state.currentRegistrations else { throw notYetUnlocked }
        switch CallerPolicy.standing(of: caller, registrations: registrations, identity: state.programIdentity) {
        case .registered(let registration):
            return registration
        case .refused(let error):
            refused()
            throw error
        case .unregistered(let reason):
            refused()
            log("refused \(what) of pid \(caller.pid): \(reason)")
            throw CallerPolicy.notRegistered(reason)
        case .unidentified(let reason):
            refused()
            log("refused \(what) of pid \(caller.pid): \(reason)")
            throw CallerPolicy.notIdentified(reason)
        }
    }

    private func status(_ attested: AttestedCaller) -> KeychainServiceStatus {
        let caller: CallerStanding
        if let registrations = state.currentRegistrations {
            switch CallerPolicy.standing(of: attested, registrations: registrations, identity: state.programIdentity) {
            case .registered(let registration): caller = .registered(registration.caller)
            case .unregistered, .unidentified: caller = .unregistered
            case .refused(let error): caller = .refused(error.detail ?? error.message)
            }
        } else {
            if case .executable = attested.attestation, state.programIdentity == .executable {
                caller = .unknownUntilFirstUnlock
            } else {
                caller = .unregistered
            }
        }
        if !caller.agentServes { refused() }
        return KeychainServiceStatus(
            lockState: state.keychain.lockState, keychainPath: state.keychainPath,
            agentProcessIdentifier: CurrentProcess.id, caller: caller)
    }
}
