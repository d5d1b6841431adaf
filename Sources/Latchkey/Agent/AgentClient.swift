public import Foundation
import LatchkeyPOSIX
import Synchronization

/// A connection to `latchkeyd`. Requests are sent one at a time; when the connection breaks (the agent
/// restarted), the next request reconnects once before reporting `errSecNotAvailable`. A forked child never
/// reuses its parent's connection: it opens its own (the agent answers only the process that connected).
public final class AgentClient: Sendable {
    /// The keychain the agent serves for this client.
    public let keychainPath: String
    /// The socket.
    public let socketPath: String
    private struct State: ~Copyable {
        var stream: AgentStream?
        var owner: Int32
        var nextID: UInt32 = 1
    }
    private let state: Mutex<State>

    private init(keychainPath: String, socketPath: String, stream: AgentStream) {
        self.keychainPath = keychainPath
        self.socketPath = socketPath
        self.state = Mutex(State(stream: stream, owner: CurrentProcess.id, nextID: 2))
    }

    /// Connects and says hello; nil when no agent runs there or it serves another keychain. Before sending
    /// anything it checks the socket (see `AgentLocation`): a socket in a directory another user could
    /// have prepared, or a listener running as another user, is refused with `errSecWrPerm`.
    public static func connect(keychainPath: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws(KeychainError) -> AgentClient?
    {
        let socket = AgentLocation.socketPath(environment: environment)
        guard try AgentLocation.inspect(socket) == .trusted,
            let stream = try hello(socket: socket, keychainPath: keychainPath)
        else { return nil }
        return AgentClient(keychainPath: keychainPath, socketPath: socket, stream: stream)
    }

    /// Connects, checks who listens, answers the agent's greeting with hello; nil when no usable agent
    /// answers (nobody listens, another keychain, another protocol).
    private static func hello(socket: String, keychainPath: String) throws(KeychainError) -> AgentStream? {
        guard let stream = AgentStream.connect(path: socket) else { return nil }
        try AgentLocation.verifyListener(stream.descriptor, socketPath: socket)
        do {
            let greeting = try AgentGreeting.decode(try stream.receive())
            try stream.send(AgentRequest.hello(keychainPath: keychainPath, challenge: greeting.challenge).encoded(id: 1))
            let response = try AgentResponse.decode(try stream.receive())
            return response.status == .success ? stream : nil
        } catch {
            return nil  // No usable agent: the caller falls back to opening the keychain itself.
        }
    }

    /// Sends a request and waits for its response.
    public func send(_ request: AgentRequest) throws(KeychainError) -> AgentResponse {
        let outcome: Result<AgentResponse, KeychainError> = state.withLock { state in
            if state.owner != CurrentProcess.id {
                // A forked child: the connection belongs to the parent.
                state.stream = nil
                state.owner = CurrentProcess.id
            }
            for attempt in 0..<2 {
                if state.stream == nil {
                    let stream: AgentStream?
                    do throws(KeychainError) {
                        stream = try Self.hello(socket: socketPath, keychainPath: keychainPath)
                    } catch {
                        return .failure(error)
                    }
                    guard let stream else {
                        return .failure(KeychainError(.notAvailable, "the Latchkey agent is not running"))
                    }
                    state.stream = stream
                    state.nextID = 2
                }
                let id = state.nextID
                state.nextID &+= 1
                do {
                    try state.stream!.send(request.encoded(id: id))
                    let response = try AgentResponse.decode(try state.stream!.receive())
                    guard response.id == id || response.id == 0 else {
                        return .failure(KeychainError(.internal, "the agent answered request \(response.id) instead of \(id)"))
                    }
                    return .success(response)
                } catch {
                    // The agent went away (or restarted): reconnect once.
                    state.stream = nil
                    if attempt == 1 { return .failure(KeychainError(.notAvailable, "the connection to the Latchkey agent broke")) }
                }
            }
            return .failure(KeychainError(.notAvailable, "the Latchkey agent is not running"))
        }
        return try outcome.get()
    }

    /// The agent's view of this client and of the keychain.
    public func status() throws(KeychainError) -> AgentStatus {
        guard case .dictionary(let values)? = try send(.status).result() else {
            throw KeychainError(.internal, "the agent's status is malformed")
        }
        return AgentStatus(values)
    }
}

/// What the agent says about itself and about the caller.
public struct AgentStatus: Sendable, Equatable {
    /// The keychain's lock state.
    public let lockState: LockState
    /// The agent's process id.
    public let processIdentifier: Int
    /// The keychain it serves.
    public let keychainPath: String
    /// How it identifies the caller: registered, unregistered, or refused.
    public let callerStanding: String
    /// The caller's application identifier and access groups, when it has them.
    public let applicationIdentifier: String?
    /// The caller's access groups.
    public let accessGroups: [String]

    init(_ values: [String: WireValue]) {
        func text(_ key: String) -> String? { if case .string(let value)? = values[key] { value } else { nil } }
        lockState = switch text("lockState") {
            case "unlocked": .unlocked
            case "locked": .locked
            default: .neverUnlocked
        }
        if case .integer(let pid)? = values["pid"] { processIdentifier = Int(pid) } else { processIdentifier = 0 }
        keychainPath = text("keychain") ?? ""
        callerStanding = text("caller") ?? "unknown"
        applicationIdentifier = text("applicationIdentifier")
        if case .array(let groups)? = values["accessGroups"] {
            accessGroups = groups.compactMap { if case .string(let group) = $0 { group } else { nil } }
        } else {
            accessGroups = []
        }
    }

    /// Whether the caller is a registered application.
    public var isRegistered: Bool { callerStanding == "registered" }

    /// The standing of a program the agent does not know: it is served nothing but status, unlock and
    /// lock, and opens the keychain itself instead (with the passphrase).
    public static let unregistered = "unregistered"
}

/// The dictionary operations served by the agent for the calling process.
public struct AgentBackend: KeychainBackend {
    /// The connection.
    public let client: AgentClient

    /// Creates a backend over a connection.
    public init(client: AgentClient) { self.client = client }

    public func add(_ attributes: [String: Any]) throws(KeychainError) -> Any? {
        try client.send(.add(try Self.wire(attributes))).result()?.object
    }

    public func copyMatching(_ query: [String: Any]) throws(KeychainError) -> Any? {
        try client.send(.copyMatching(try Self.wire(query))).result()?.object
    }

    public func update(_ query: [String: Any], with attributesToUpdate: [String: Any]) throws(KeychainError) {
        _ = try client.send(.update(try Self.wire(query), try Self.wire(attributesToUpdate))).result()
    }

    public func delete(_ query: [String: Any]) throws(KeychainError) {
        _ = try client.send(.delete(try Self.wire(query))).result()
    }

    public func upsert(_ query: [String: Any], attributes: [String: Any]) throws(KeychainError) {
        _ = try client.send(.upsert(try Self.wire(query), try Self.wire(attributes))).result()
    }

    static func wire(_ dictionary: [String: Any]) throws(KeychainError) -> [String: WireValue] {
        guard let values = WireValue.dictionary(dictionary) else {
            let bad = dictionary.first { WireValue($0.value) == nil }
            throw KeychainError.param("the value of '\(bad?.key ?? "?")' cannot be sent to the agent (type \(bad.map { DictionaryValue.typeName($0.value) } ?? "?"))")
        }
        return values
    }
}
