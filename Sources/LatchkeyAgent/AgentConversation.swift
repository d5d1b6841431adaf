import FoundationEssentials
import LatchkeyCaller
import LatchkeyCrypto
import LatchkeyEngine
import LatchkeyPOSIX
import LatchkeyProtocol

/// How every connection of the agent goes, whether the agent serves the keychain (`ConnectionHandler`) or
/// still waits for it to appear (`KeychainWaitingRoom`): the peer is identified and another user's refused,
/// the agent greets it with a fresh challenge, and then reads frames only from the process that connected —
/// the first a hello that answers the challenge, every id above the one before. A malformed, oversized,
/// truncated or out-of-order message gets an error response and the connection is closed.
struct AgentConversation {
    let stream: AgentStream
    let budget: ByteBudget
    let log: @Sendable (String) -> Void
    /// Who connected, as the gate attested it (read before the greeting).
    let caller: AttestedCaller
    /// The process that connected, pinned.
    var peer: PeerIdentity { caller.peer }
    private let challenge: [UInt8]

    /// A client must say hello within this long after connecting.
    static let helloSeconds = 5

    /// Identifies the peer and greets it; nil when the connection is to end now (another user's, one whose
    /// credentials cannot be read: refused with a response that says why; or one that went away).
    init?(stream: AgentStream, budget: ByteBudget, digests: DigestCache, log: @escaping @Sendable (String) -> Void) {
        self.stream = stream
        self.budget = budget
        self.log = log
        do {
            try UnixSocket.enableSenderCredentials(stream.descriptor)
        } catch {
            log("cannot read message credentials on a connection (\(error)); closing it")
            return nil
        }
        stream.setTimeout(seconds: Self.helloSeconds)
        guard let caller = CallerGate.attest(streamPeer: stream.descriptor, frontEnd: .agentSocket, digests: digests)
        else {
            Self.refuse(stream, id: 0, KeychainError(.internal, "the agent cannot read the peer's credentials"))
            return nil
        }
        let peer = caller.peer
        // Root may hand over the login password (pam_latchkey's session step connects as root, so the agent
        // can tell its hand-over from any program of the user's); it is served as an unregistered program.
        let byRoot = peer.uid == 0 && CurrentProcess.effectiveUserID != 0
        guard peer.uid == CurrentProcess.effectiveUserID || byRoot else {
            log("refused pid \(peer.pid): uid \(peer.uid) is not the agent's user")
            Self.refuse(
                stream, id: 0, KeychainError(.authFailed, "connections from another user (uid \(peer.uid)) are refused")
            )
            return nil
        }
        if byRoot {
            log("root connected (pid \(peer.pid)): served as an unregistered program; its unlock is the login's")
        } else if case .unidentified(let reason) = caller.attestation {
            log("unidentified connection: \(reason); served as an unregistered program")
        }
        self.caller = caller
        // Identified first, challenged second: whatever the client sends back was written after the
        // identification above.
        challenge = Array(SecureRandom.bytes(AgentGreeting.challengeLength))
        do {
            try stream.send(Data(AgentGreeting(challenge: challenge).encoded()))
        } catch {
            return nil
        }
        stream.spinNanoseconds = AgentFrame.helloSpinNanoseconds
    }

    /// The credentials every message must carry: those of the process that connected.
    var sender: UnixSocket.Credentials { UnixSocket.Credentials(pid: peer.pid, uid: peer.uid, gid: 0) }

    /// Answers requests in order until the connection ends. `answer` answers one (nil: close the connection
    /// without answering); a hello it fails closes the connection after the refusal; after the hello,
    /// `greeted` runs and the connection may idle `idleSeconds`.
    func run(idleSeconds: Int, greeted: () -> Void, answer: (AgentRequest, UInt32) -> AgentResponse?) {
        var saidHello = false
        var lastID: UInt32 = 0
        var answeredAfterHello = 0
        while true {
            guard var message = receive(saidHello: saidHello) else { return }
            defer { message.resetBytes(in: 0..<message.count) }  // A passphrase or a secret may be in it.
            let id: UInt32
            let request: AgentRequest
            do {
                (id, request) = try AgentRequest.decode(message)
            } catch {
                refuse(id: 0, KeychainError(.param, error.description))
                return
            }
            if let refusal = outOfOrder(request, id: id, lastID: lastID, saidHello: saidHello) {
                refuse(id: id, refusal)
                return
            }
            lastID = id
            guard let response = answer(request, id) else { return }
            if case .hello = request {
                if case .failure(let error) = response.outcome {
                    refuse(id: id, error)
                    return
                }
                saidHello = true
                greeted()
                stream.setTimeout(seconds: idleSeconds)
                stream.spinNanoseconds = AgentFrame.firstRequestSpinNanoseconds
            } else {
                answeredAfterHello += 1
                if answeredAfterHello == 2 { stream.spinNanoseconds = AgentFrame.requestSpinNanoseconds }
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

    /// Why `request` is out of order (nil when it is not): before the hello, anything else, or a hello that
    /// does not answer the greeting; after it, a second hello; at any time an id not above the last one.
    private func outOfOrder(_ request: AgentRequest, id: UInt32, lastID: UInt32, saidHello: Bool) -> KeychainError? {
        if !saidHello {
            guard case .hello(_, let answer) = request else {
                return KeychainError(
                    .param, AgentProtocolError.outOfOrder("the first request must be hello").description)
            }
            guard answer == challenge else {
                log("refused pid \(peer.pid): its hello does not answer the greeting")
                return KeychainError(
                    .param, AgentProtocolError.outOfOrder("the hello does not answer the agent's greeting").description)
            }
        } else if case .hello = request {
            return KeychainError(.param, AgentProtocolError.outOfOrder("hello was already said").description)
        }
        guard id > lastID else {
            return KeychainError(.param, AgentProtocolError.outOfOrder("request \(id) after \(lastID)").description)
        }
        return nil
    }

    /// The next frame from the process that connected; nil when the connection ends (after saying why to
    /// the client where that is safe, and in the log where it is a refusal).
    private func receive(saidHello: Bool) -> Data? {
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

    private func refuse(id: UInt32, _ error: KeychainError) { Self.refuse(stream, id: id, error) }

    private static func refuse(_ stream: AgentStream, id: UInt32, _ error: KeychainError) {
        // Closing anyway: a refusal that cannot be sent changes nothing.
        try? stream.send(AgentResponse(id: id, operation: .hello, failure: error).encoded())
    }

    /// The answer to a hello for `keychainPath`: an empty path asks for whichever keychain the agent serves
    /// (pam_latchkey, which cannot know the user's configured default); every request that matters still
    /// needs its passphrase or its identity.
    static func checkHello(path: String, servedPath: String) throws(KeychainError) {
        guard path.isEmpty || URL(fileURLWithPath: path).standardizedFileURL.path == servedPath else {
            throw KeychainError(.notAvailable, "this agent serves another keychain")
        }
    }
}
