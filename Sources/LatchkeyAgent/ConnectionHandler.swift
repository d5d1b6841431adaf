import Foundation
import LatchkeyCrypto
import LatchkeyEngine
import LatchkeyPKI
import LatchkeyPOSIX
import LatchkeyProtocol

/// Serves one client connection on its own thread: identifies the peer, greets it with a challenge, then
/// answers its requests in order. A malformed, oversized, truncated or out-of-order message gets an error
/// response and the connection is closed; a message from any process but the one that connected is not
/// answered at all. The agent and every other client carry on.
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
    /// A client must say hello within this long after connecting.
    static let helloSeconds = 5

    func run() {
        do {
            try UnixSocket.enableSenderCredentials(stream.descriptor)
        } catch {
            log("cannot read message credentials on a connection (\(error)); closing it")
            return
        }
        stream.setTimeout(seconds: Self.helloSeconds)
        guard let peer = PeerIdentity.of(socket: stream.descriptor, digests: state.digests) else {
            refuse(id: 0, KeychainError(.internal, "the agent cannot read the peer's credentials"))
            return
        }
        guard peer.uid == CurrentProcess.effectiveUserID else {
            log("refused pid \(peer.pid): uid \(peer.uid) is not the agent's user")
            refuse(id: 0, KeychainError(.authFailed, "connections from another user (uid \(peer.uid)) are refused"))
            return
        }
        if let reason = peer.untrusted { log("unidentified connection: \(reason); served as an unregistered program") }
        // Identified first, challenged second: whatever the client sends back was written after the
        // identification above.
        let challenge = Array(SecureRandom.bytes(AgentGreeting.challengeLength))
        do {
            try stream.send(Data(AgentGreeting(challenge: challenge).encoded()))
        } catch {
            return
        }
        var saidHello = false
        var lastID: UInt32 = 0
        let sender = UnixSocket.Credentials(pid: peer.pid, uid: peer.uid, gid: 0)
        while true {
            guard var message = receive(from: sender, peer: peer, saidHello: saidHello) else { return }
            defer { message.resetBytes(in: 0..<message.count) }  // A passphrase or a secret may be in it.
            let id: UInt32
            let request: AgentRequest
            do {
                (id, request) = try AgentRequest.decode(message)
            } catch {
                refuse(id: 0, KeychainError(.param, error.description))
                return
            }
            if !saidHello {
                guard case .hello(_, let answer) = request else {
                    refuse(id: id, KeychainError(.param, AgentProtocolError.outOfOrder("the first request must be hello").description))
                    return
                }
                guard answer == challenge else {
                    log("refused pid \(peer.pid): its hello does not answer the greeting")
                    refuse(id: id, KeychainError(.param, AgentProtocolError.outOfOrder("the hello does not answer the agent's greeting").description))
                    return
                }
            } else if case .hello = request {
                refuse(id: id, KeychainError(.param, AgentProtocolError.outOfOrder("hello was already said").description))
                return
            }
            guard id > lastID else {
                refuse(id: id, KeychainError(.param, AgentProtocolError.outOfOrder("request \(id) after \(lastID)").description))
                return
            }
            lastID = id
            state.touch()
            active()
            if request.needsIdentity, let mismatch = peer.mismatch(sender: sender, digests: state.digests) {
                log("refused pid \(peer.pid): \(mismatch); closing the connection")
                return  // Not answered: the answer could reach another program than the one identified.
            }
            let response = respond(to: request, id: id, peer: peer)
            if case .hello = request {
                if case .failure(let error) = response.outcome {
                    refuse(id: id, error)
                    return
                }
                saidHello = true
                greeted()
                stream.setTimeout(seconds: Self.idleSeconds)
                stream.spinNanoseconds = AgentFrame.requestSpinNanoseconds
            }
            var encoded = response.encoded()
            defer { encoded.resetBytes(in: 0..<encoded.count) }
            do {
                try stream.send(encoded)
            } catch {
                return
            }
        }
    }

    /// The next frame from the process that connected; nil when the connection ends (after saying why to
    /// the client where that is safe, and in the log where it is a refusal).
    private func receive(from sender: UnixSocket.Credentials, peer: PeerIdentity, saidHello: Bool) -> Data? {
        do {
            return try stream.receive(limit: AgentFrame.maximumBytes, budget: budget, from: sender)
        } catch .oversized(let size) {
            if size > AgentFrame.maximumBytes {
                refuse(id: 0, KeychainError(.param, AgentProtocolError.oversized(size).description))
            } else {
                log("refused pid \(peer.pid): a \(size)-byte message does not fit the agent's buffer budget now")
                refuse(id: 0, KeychainError(.allocate, "the agent holds too many unfinished messages now; try again"))
            }
        } catch .foreignSender(let reason) {
            log("refused pid \(peer.pid): \(reason); closing the connection")
        } catch .broken(let reason) where !saidHello && reason == "timed out" {
            log("closed the connection of pid \(peer.pid): no hello within \(Self.helloSeconds) s")
        } catch {
            // Closed, broken or timed out: nothing more to say on this connection.
        }
        return nil
    }

    private func refuse(id: UInt32, _ error: KeychainError) {
        // Closing anyway: a refusal that cannot be sent changes nothing.
        try? stream.send(AgentResponse(id: id, operation: .hello, failure: error).encoded())
    }

    func respond(to request: AgentRequest, id: UInt32, peer: PeerIdentity) -> AgentResponse {
        do throws(KeychainError) {
            return AgentResponse(id: id, operation: request.operation, outcome: .success(try perform(request, peer: peer)))
        } catch {
            return AgentResponse(id: id, operation: request.operation, failure: error)
        }
    }

    /// Runs a request: the agent's own (hello, the unattended unlock) here; a keychain request through the
    /// seam — item requests in the service of the peer's registration, the rest in the agent's own, with the
    /// agent's bookkeeping around them (the throttle on every passphrase, registrations and settings applied
    /// at once, background sync told of changes).
    private func perform(_ request: AgentRequest, peer: PeerIdentity) throws(KeychainError) -> KeychainReply {
        switch request {
        case .hello(let path, _):
            // An empty path asks for whichever keychain the agent serves (pam_latchkey, which cannot know the
            // user's configured default): every request that matters still needs its passphrase or its identity.
            guard path.isEmpty || URL(fileURLWithPath: path).standardizedFileURL.path == state.keychainPath else {
                throw KeychainError(.notAvailable, "this agent serves another keychain")
            }
            return .none
        case .unlockUnattended:
            try state.unlockUnattended()
            return .none
        case .keychain(let request):
            return try perform(request, peer: peer)
        }
    }

    private func perform(_ request: KeychainRequest, peer: PeerIdentity) throws(KeychainError) -> KeychainReply {
        switch request {
        case .status:
            return .status(status(peer))
        case .unlock(let passphrase):
            try state.unlock(passphrase)
            return .none
        case .lock:
            state.lock(reason: "requested by pid \(peer.pid)")
            return .none
        case .listRegistrations:
            guard let registrations = state.currentRegistrations else { throw notYetUnlocked }
            return .registrations(registrations)
        case .settings:
            return try state.administration.perform(request)
        case .register:
            let reply = try state.checkingPassphrase("a registration") { () throws(KeychainError) in
                try state.administration.perform(request)
            }
            try state.reloadRegistrationsIfReadable()
            if case .registration(let registration) = reply { log("registered \(registration)") }
            registrationsChanged()
            return reply
        case .unregister:
            let reply = try state.checkingPassphrase("an unregistration") { () throws(KeychainError) in
                try state.administration.perform(request)
            }
            try state.reloadRegistrationsIfReadable()
            if reply == .flag(true) { registrationsChanged() }
            return reply
        case .updateSettings(let settings, _):
            let reply = try state.checkingPassphrase("a change of settings") { () throws(KeychainError) in
                try state.administration.perform(request)
            }
            state.apply(settings)
            return reply
        case .createHeldKey(let held, _):
            var service = try service(peer)
            service.holderEnded = peer.hasEnded  // An ephemeral key goes when the process it was made for ends.
            let made = try service.perform(request)
            log("made a key held by the agent for pid \(peer.pid) (\(held.type == .rsa ? "RSA" : "EC") \(held.bits) bits)")
            return made
        case .add, .copyMatching, .update, .delete, .addOrUpdate, .copyIdentities, .useHeldKey, .releaseHeldKey:
            let service = try service(peer)
            defer { if request.changesItems { state.changed() } }
            return try service.perform(request)
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
