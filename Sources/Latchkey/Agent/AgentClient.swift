package import FoundationEssentials
package import LatchkeyEngine
import LatchkeyPOSIX
package import LatchkeyProtocol
import Synchronization

/// A connection to `latchkeyd`. Requests are sent one at a time; when the connection breaks (the agent
/// restarted), the next request reconnects once before reporting `errSecNotAvailable`. A forked child never
/// reuses its parent's connection: it opens its own (the agent answers only the process that connected).
package final class AgentClient: Sendable {
    /// The keychain the agent serves for this client.
    package let keychainPath: String
    /// The socket.
    package let socketPath: String
    private struct State: ~Copyable {
        var stream: AgentStream?
        var owner: Int32
        var nextID: UInt32 = 1
        /// The stream's read and write timeout now (set only when a request needs another).
        var timeout = AgentFrame.replySeconds
        /// How long to poll for each kind of reply, from how long they took.
        var wait = ReplyWait()
        /// The agent's answer to the status request sent with the hello, until another request is sent.
        var statusAtHello: StatusAtHello?
    }
    /// The status the agent gave in answer to the request that went with the hello, or why it gave none.
    private enum StatusAtHello {
        case status(KeychainServiceStatus)
        case failure(KeychainError)
    }
    private let state: Mutex<State>

    private init(keychainPath: String, socketPath: String, greeted: Greeted) {
        self.keychainPath = keychainPath
        self.socketPath = socketPath
        self.state = Mutex(
            State(stream: greeted.stream, owner: CurrentProcess.id, nextID: Self.firstID, statusAtHello: greeted.status)
        )
    }

    /// The id of the first request after the hello (1) and the status sent with it (2).
    private static let firstID: UInt32 = 3

    /// Connects and says hello; nil when no agent runs there or it serves another keychain. Before sending
    /// anything it checks the socket (see `AgentLocation`): a socket in a directory another user could
    /// have prepared, or a listener running as another user, is refused with `errSecWrPerm`.
    package static func connect(
        keychainPath: String, environment: [String: String] = CurrentProcess.environment
    )
        throws(KeychainError) -> AgentClient?
    {
        let socket = AgentLocation.socketPath(environment: environment)
        guard try AgentLocation.inspect(socket) == .trusted,
            let greeted = try hello(socket: socket, keychainPath: keychainPath)
        else { return nil }
        return AgentClient(keychainPath: keychainPath, socketPath: socket, greeted: greeted)
    }

    /// A connection the agent has greeted and taken the hello on, with its answer to the status request
    /// sent along.
    private struct Greeted {
        let stream: AgentStream
        let status: StatusAtHello
    }

    /// Connects, checks who listens, answers the agent's greeting with hello and, in the same turn, asks
    /// for the status — a connection's first question is almost always who the agent takes this program
    /// for (`AgentRouting`), and asking it before the hello is answered saves a round trip (the agent
    /// answers in order; after a refused hello it closes the connection and drops the question). Nil when
    /// no usable agent answers (nobody listens, another keychain, another protocol).
    private static func hello(socket: String, keychainPath: String) throws(KeychainError) -> Greeted? {
        guard let stream = AgentStream.connect(path: socket) else { return nil }
        try AgentLocation.verifyListener(stream.descriptor, socketPath: socket)
        stream.spinNanoseconds = AgentFrame.replySpinNanoseconds
        do {
            let greeting = try AgentGreeting.decode(try stream.receive())
            try stream.send(
                AgentRequest.hello(keychainPath: keychainPath, challenge: greeting.challenge).encoded(id: 1))
            try stream.send(AgentRequest.keychain(.status).encoded(id: 2))
            let response = try AgentResponse.decode(try stream.receive())
            guard case .success = response.outcome else { return nil }
            let answer = try AgentResponse.decode(try stream.receive())
            guard answer.id == 2 else { return nil }
            do throws(KeychainError) {
                guard case .status(let status) = try answer.reply() else { return nil }
                return Greeted(stream: stream, status: .status(status))
            } catch {
                return Greeted(stream: stream, status: .failure(error))
            }
        } catch {
            return nil  // No usable agent: the caller falls back to opening the keychain itself.
        }
    }

    /// Sends a request and returns the agent's reply, or its failure as a `KeychainError`.
    package func send(_ request: AgentRequest) throws(KeychainError) -> KeychainReply {
        // Typed throws through the lock rather than a `Result`: a new process would otherwise pay the
        // runtime's conformance scan for `Result<AgentResponse, KeychainError>` on its first request
        // (docs/DESIGN-NOTES.md, "The CLI's start").
        let response: AgentResponse = try state.withLock { state throws(KeychainError) in
            if state.owner != CurrentProcess.id {
                // A forked child: the connection belongs to the parent.
                state.stream = nil
                state.owner = CurrentProcess.id
            }
            for attempt in 0..<2 {
                if state.stream == nil {
                    guard let greeted = try Self.hello(socket: socketPath, keychainPath: keychainPath) else {
                        throw KeychainError(.notAvailable, "the Latchkey agent is not running")
                    }
                    state.stream = greeted.stream
                    state.nextID = Self.firstID
                    state.timeout = AgentFrame.replySeconds
                }
                state.statusAtHello = nil  // Answered before this request: no longer the current one.
                let id = state.nextID
                state.nextID &+= 1
                let response: AgentResponse
                do {
                    var message = request.encoded(id: id)
                    defer { message.resetBytes(in: 0..<message.count) }  // It may hold a passphrase or a secret.
                    // The agent may ask the user (pinentry) before answering: wait as long as it lets them. The
                    // timeout changes only when the kind of request does (two system calls each time).
                    let wanted = request.mayAskTheUser ? AgentFrame.userAnswerSeconds : AgentFrame.replySeconds
                    if state.timeout != wanted {
                        state.stream!.setTimeout(seconds: wanted)
                        state.timeout = wanted
                    }
                    let kind = request.waitKind
                    state.stream!.spinNanoseconds = state.wait.spin(for: kind)
                    let sent = ContinuousClock.now
                    try state.stream!.send(message)
                    let received = try state.stream!.receive()
                    let elapsed = (ContinuousClock.now - sent).components
                    state.wait.record(
                        kind,
                        nanoseconds: Int(elapsed.seconds) * 1_000_000_000 + Int(elapsed.attoseconds / 1_000_000_000))
                    response = try AgentResponse.decode(received)
                } catch {
                    // The agent went away (or restarted): reconnect once.
                    state.stream = nil
                    if attempt == 1 {
                        throw KeychainError(.notAvailable, "the connection to the Latchkey agent broke")
                    }
                    continue
                }
                guard response.id == id || response.id == 0 else {
                    throw KeychainError(.internal, "the agent answered request \(response.id) instead of \(id)")
                }
                return response
            }
            throw KeychainError(.notAvailable, "the Latchkey agent is not running")
        }
        return try response.reply()
    }

    /// `request` encoded `count` times ahead, each with the next id this connection would give it (the agent
    /// takes each id once, in order), for `replay`.
    package func encodedAhead(_ request: AgentRequest, count: Int) -> [Data] {
        state.withLock { state in
            let first = state.nextID
            state.nextID &+= UInt32(count)
            return (0..<UInt32(count)).map { request.encoded(id: first &+ $0) }
        }
    }

    /// Sends `message` — a request encoded ahead (`encodedAhead`) — and reads the reply's frame without
    /// decoding it; its size. The floor of a request through the agent (latchkey-bench `--pki`): the request's
    /// bytes replayed on the warm connection, with none of the client's work around them.
    package func replay(_ message: Data) throws(KeychainError) -> Int {
        try state.withLock { state throws(KeychainError) in
            guard state.owner == CurrentProcess.id, let stream = state.stream else {
                throw KeychainError(.notAvailable, "no connection to the Latchkey agent to replay on")
            }
            state.statusAtHello = nil
            do {
                try stream.send(message)
                return try stream.receive().count
            } catch {
                state.stream = nil
                throw KeychainError(.notAvailable, "the connection to the Latchkey agent broke")
            }
        }
    }

    /// Whether the agent has closed this connection (or it broke, or this is a forked child): checked without
    /// a request, by whether the idle connection became readable — on a connection the client sends nothing
    /// on, that is only its end. The agent closes the connections of programs it refused when its registrations
    /// change, so a program's kept decision to open the keychain itself (`AgentRouting`) is made again.
    package func agentClosedConnection() -> Bool {
        state.withLock { state in
            guard state.owner == CurrentProcess.id, let stream = state.stream else { return true }
            return stream.descriptor.waitReadable(milliseconds: 0)
        }
    }

    /// The agent's view of this client and of the keychain: the answer that came with the hello when no
    /// other request has been sent since, else asked now.
    package func status() throws(KeychainError) -> KeychainServiceStatus {
        let atHello = state.withLock { state in
            defer { state.statusAtHello = nil }
            return state.owner == CurrentProcess.id ? state.statusAtHello : nil
        }
        switch atHello {
        case .status(let status): return status
        case .failure(let error): throw error
        case nil: break
        }
        guard case .status(let status) = try send(.keychain(.status)) else { throw KeychainReply.mismatch }
        return status
    }
}

/// `KeychainService` through the agent: it only carries each request; the agent runs it as this program —
/// its registration's identity — on the keychain it has unlocked (one request even for an identity search).
package struct AgentKeychainService: KeychainService {
    /// The connection.
    package let client: AgentClient

    /// A service over `client`.
    package init(client: AgentClient) { self.client = client }

    package func perform(_ request: KeychainRequest) throws(KeychainError) -> KeychainReply {
        try client.send(.keychain(request))
    }
}
