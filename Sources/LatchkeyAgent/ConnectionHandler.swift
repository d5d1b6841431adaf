import Foundation
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

    func run() {
        guard let conversation = AgentConversation(stream: stream, budget: budget, digests: state.digests, log: log) else { return }
        let peer = conversation.peer
        let sender = conversation.sender
        conversation.run(idleSeconds: Self.idleSeconds, greeted: greeted) { request, id in
            state.touch()
            active()
            if request.needsIdentity, let mismatch = peer.mismatch(sender: sender, digests: state.digests) {
                log("refused pid \(peer.pid): \(mismatch); closing the connection")
                return nil  // Not answered: the answer could reach another program than the one identified.
            }
            return respond(to: request, id: id, peer: peer)
        }
    }

    func respond(to request: AgentRequest, id: UInt32, peer: PeerIdentity) -> AgentResponse {
        do throws(KeychainError) {
            return AgentResponse(id: id, operation: request.operation, outcome: .success(try perform(request, peer: peer)))
        } catch {
            return AgentResponse(id: id, operation: request.operation, failure: error)
        }
    }

    /// Runs a request; item requests as the service of the peer's registration.
    private func perform(_ request: AgentRequest, peer: PeerIdentity) throws(KeychainError) -> AgentReply {
        switch request {
        case .hello(let path, _):
            try AgentConversation.checkHello(path: path, servedPath: state.keychainPath)
            return .none
        case .status:
            return .status(status(peer))
        case .unlock(var bytes):
            defer { bytes.withUnsafeMutableBytes { wipeBytes($0) } }
            try state.unlock(Passphrase(bytes: bytes))
            return .none
        case .unlockUnattended:
            try state.unlockUnattended()
            return .none
        case .lock:
            state.lock(reason: "requested by pid \(peer.pid)")
            return .none
        case .add(let item, let returning):
            defer { state.changed() }
            return .item(try service(peer).add(item, returning: returning))
        case .copyMatching(let query): return .items(try service(peer).copyMatching(query))
        case .copyIdentities(let certificates, let keys, let limit):
            return .identities(try service(peer).copyIdentities(certificates: certificates, keys: keys, limit: limit))
        case .update(let query, let changes):
            defer { state.changed() }
            return .count(try service(peer).update(query, with: changes))
        case .delete(let query):
            defer { state.changed() }
            return .count(try service(peer).delete(query))
        case .addOrUpdate(let item):
            defer { state.changed() }
            return .flag(try service(peer).addOrUpdate(item))
        case .createHeldKey(let request, let returning):
            var service = try service(peer)
            service.holderEnded = peer.hasEnded  // An ephemeral key goes when the process it was made for ends.
            let made = try service.createHeldKey(request, returning: returning)
            log("made a key held by the agent for pid \(peer.pid) (\(request.type == .rsa ? "RSA" : "EC") \(request.bits) bits)")
            return .item(made)
        case .useHeldKey(let reference, let use): return .bytes(try service(peer).useHeldKey(reference, for: use))
        case .releaseHeldKey(let reference):
            try service(peer).releaseHeldKey(reference)
            return .none
        case .register(var bytes, let path, let identifier, let groups):
            defer { bytes.withUnsafeMutableBytes { wipeBytes($0) } }
            let registration = try ApplicationRegistration(executableAt: path, applicationIdentifier: identifier, accessGroups: groups)
            try state.checkingPassphrase("a registration") { () throws(KeychainError) in
                try state.keychain.register(registration, passphrase: Passphrase(bytes: bytes))
            }
            try state.reloadRegistrationsIfReadable()
            log("registered \(registration)")
            registrationsChanged()
            return .registration(registration)
        case .unregister(var bytes, let path):
            defer { bytes.withUnsafeMutableBytes { wipeBytes($0) } }
            let removed = try state.checkingPassphrase("an unregistration") { () throws(KeychainError) in
                try state.keychain.unregister(executablePath: path, passphrase: Passphrase(bytes: bytes))
            }
            try state.reloadRegistrationsIfReadable()
            if removed { registrationsChanged() }
            return .flag(removed)
        case .listRegistrations:
            guard let registrations = state.currentRegistrations else { throw notYetUnlocked }
            return .registrations(registrations)
        case .updateSettings(var bytes, let settings):
            defer { bytes.withUnsafeMutableBytes { wipeBytes($0) } }
            try settings.validate()
            try state.checkingPassphrase("a change of settings") { () throws(KeychainError) in
                try state.keychain.verifyPassphrase(Passphrase(bytes: bytes))
            }
            try state.updateSettings(settings)
            return .none
        case .settings:
            return .settings(try state.keychain.settings)
        }
    }

    private var notYetUnlocked: KeychainError {
        KeychainError(.interactionNotAllowed,
                      "the agent has not been unlocked since it started (application registrations are sealed under the passphrase)")
    }

    /// The service a peer's item requests run in: its registration's identity.
    private func service(_ peer: PeerIdentity) throws(KeychainError) -> LocalKeychainService {
        guard let registrations = state.currentRegistrations else { throw notYetUnlocked }
        switch CallerPolicy.standing(of: peer, registrations: registrations) {
        case .registered(let registration):
            return LocalKeychainService(database: state.keychain, caller: registration.caller, presence: state.presence)
        case .refused(let error):
            refused()
            throw error
        case .unregistered(let path):
            refused()
            log("refused an item request of pid \(peer.pid): \(path) is not registered")
            throw CallerPolicy.notRegistered(path)
        case .unidentified(let reason):
            refused()
            throw CallerPolicy.notIdentified(reason)
        }
    }

    private func status(_ peer: PeerIdentity) -> KeychainServiceStatus {
        let caller: CallerStanding
        if let registrations = state.currentRegistrations {
            switch CallerPolicy.standing(of: peer, registrations: registrations) {
            case .registered(let registration): caller = .registered(registration.caller)
            case .unregistered, .unidentified: caller = .unregistered
            case .refused(let error): caller = .refused(error.detail ?? error.message)
            }
        } else {
            caller = peer.untrusted == nil ? .unknownUntilFirstUnlock : .unregistered
        }
        if !caller.agentServes { refused() }
        return KeychainServiceStatus(lockState: state.keychain.lockState, keychainPath: state.keychainPath,
                                     agentProcessIdentifier: CurrentProcess.id, caller: caller)
    }
}
