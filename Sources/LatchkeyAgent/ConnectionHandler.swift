import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyPOSIX

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
        // Identified first, challenged second: whatever the client sends back was written after the
        // identification above.
        let challenge = SecureRandom.bytes(AgentGreeting.challengeLength)
        do {
            try stream.send(AgentGreeting(challenge: challenge).encoded())
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
                guard response.status == .success else {
                    refuse(id: id, KeychainError(response.status, response.detail))
                    return
                }
                saidHello = true
                greeted()
                stream.setTimeout(seconds: Self.idleSeconds)
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
        try? stream.send(AgentResponse(id: id, status: error.status, detail: error.detail).encoded())  // Closing anyway.
    }

    func respond(to request: AgentRequest, id: UInt32, peer: PeerIdentity) -> AgentResponse {
        do throws(KeychainError) {
            return AgentResponse(id: id, status: .success, value: try perform(request, peer: peer))
        } catch {
            return AgentResponse(id: id, status: error.status, detail: error.detail)
        }
    }

    private func perform(_ request: AgentRequest, peer: PeerIdentity) throws(KeychainError) -> WireValue? {
        switch request {
        case .hello(let path, _):
            let wanted = URL(fileURLWithPath: path).standardizedFileURL.path
            guard wanted == state.keychainPath else {
                throw KeychainError(.notAvailable, "this agent serves another keychain")
            }
            return nil
        case .status:
            return status(peer)
        case .unlock(var bytes):
            defer { bytes.withUnsafeMutableBytes { wipeBytes($0) } }
            try state.unlock(Passphrase(bytes: bytes))
            return nil
        case .lock:
            state.lock(reason: "requested by pid \(peer.pid)")
            return nil
        case .add(let query):
            return try backend(peer).add(objects(query)).flatMap(wire)
        case .copyMatching(let query):
            return try backend(peer).copyMatching(objects(query)).flatMap(wire)
        case .update(let query, let changes):
            try backend(peer).update(objects(query), with: objects(changes))
            return nil
        case .delete(let query):
            try backend(peer).delete(objects(query))
            return nil
        case .upsert(let query, let changes):
            try backend(peer).upsert(objects(query), attributes: objects(changes))
            return nil
        case .register(var bytes, let path, let identifier, let groups):
            defer { bytes.withUnsafeMutableBytes { wipeBytes($0) } }
            let registration = try ApplicationRegistration(executableAt: path, applicationIdentifier: identifier, accessGroups: groups)
            try state.keychain.register(registration, passphrase: Passphrase(bytes: bytes))
            try state.reloadRegistrations()
            log("registered \(registration)")
            return nil
        case .unregister(var bytes, let path):
            defer { bytes.withUnsafeMutableBytes { wipeBytes($0) } }
            let removed = try state.keychain.unregister(executablePath: path, passphrase: Passphrase(bytes: bytes))
            try state.reloadRegistrations()
            return .boolean(removed)
        case .listRegistrations:
            guard let registrations = state.currentRegistrations else { throw notYetUnlocked }
            return .array(registrations.map { registration in
                .dictionary([
                    "path": .string(registration.executablePath), "applicationIdentifier": .string(registration.applicationIdentifier),
                    "accessGroups": .array(registration.accessGroups.map(WireValue.string)),
                    "digest": .data(registration.executableDigest),
                ])
            })
        case .updateSettings(var bytes, let seconds, let sleep):
            defer { bytes.withUnsafeMutableBytes { wipeBytes($0) } }
            try state.keychain.verifyPassphrase(Passphrase(bytes: bytes))
            try state.updateSettings(KeychainSettings(autoLockAfterSeconds: seconds, lockOnSleep: sleep))
            return nil
        }
    }

    private var notYetUnlocked: KeychainError {
        KeychainError(.interactionNotAllowed,
                      "the agent has not been unlocked since it started (application registrations are sealed under the passphrase)")
    }

    private func backend(_ peer: PeerIdentity) throws(KeychainError) -> DatabaseBackend {
        guard let registrations = state.currentRegistrations else { throw notYetUnlocked }
        switch CallerPolicy.standing(of: peer, registrations: registrations) {
        case .refused(let error): throw error
        case .registered(let registration): return DatabaseBackend(database: state.keychain, caller: registration.caller)
        case .unregistered(let path): throw CallerPolicy.notRegistered(path)
        }
    }

    private func status(_ peer: PeerIdentity) -> WireValue {
        let lockState: String =
            switch state.keychain.lockState {
            case .unlocked: "unlocked"
            case .locked: "locked"
            case .neverUnlocked: "neverUnlocked"
            }
        var values: [String: WireValue] = [
            "lockState": .string(lockState),
            "pid": .integer(Int64(CurrentProcess.id)),
            "keychain": .string(state.keychainPath),
        ]
        if let registrations = state.currentRegistrations {
            let standing = CallerPolicy.standing(of: peer, registrations: registrations)
            values["caller"] = .string(standing.name)
            switch standing {
            case .registered(let registration):
                values["applicationIdentifier"] = .string(registration.applicationIdentifier)
                values["accessGroups"] = .array(registration.accessGroups.map(WireValue.string))
            case .unregistered, .refused: break
            }
        } else {
            values["caller"] = .string("unknown until the first unlock")
        }
        return .dictionary(values)
    }

    private func objects(_ values: [String: WireValue]) -> [String: Any] { values.mapValues(\.object) }

    private func wire(_ value: Any) -> WireValue? { WireValue(value) }
}
