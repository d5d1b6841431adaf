public import Foundation

/// Why a message from the other side of the agent socket was refused.
public enum AgentProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Bytes that do not decode as a message.
    case malformed(String)
    /// A frame above the size limit.
    case oversized(Int)
    /// A message the conversation did not allow at that point (a request before hello, a repeated id).
    case outOfOrder(String)

    public var description: String {
        switch self {
        case .malformed(let reason): "malformed message: \(reason)"
        case .oversized(let size): "message of \(size) bytes is larger than the limit of \(AgentFrame.maximumBytes)"
        case .outOfOrder(let reason): "message out of order: \(reason)"
        }
    }
}

/// Framing on the agent socket: a 4-byte big-endian length, then the message.
public enum AgentFrame {
    /// The largest message (a 16 MiB secret with room for its dictionary).
    public static let maximumBytes = 20 << 20
    /// The protocol version this code speaks (2: the agent greets first with a challenge).
    public static let version: UInt8 = 2
    static let magic = Array("LK".utf8)
}

/// The agent's first frame on every connection: a fresh random challenge, sent after the agent has
/// identified the process that connected. The client's hello must carry it back, so every request on the
/// connection was written after that identification (a program cannot queue requests and then exec another
/// program to be identified as that one).
public struct AgentGreeting: Sendable, Equatable {
    /// The challenge's length in bytes.
    public static let challengeLength = 16
    private static let kind = UInt8(ascii: "G")
    /// The random challenge.
    public let challenge: Data

    /// A greeting with this challenge.
    public init(challenge: Data) { self.challenge = challenge }

    /// The message: "LK", version, "G", challenge.
    public func encoded() -> Data {
        var writer = ByteWriter(capacity: 4 + challenge.count)
        writer.appendRaw(AgentFrame.magic)
        writer.append(AgentFrame.version)
        writer.append(Self.kind)
        writer.appendRaw(challenge)
        return writer.data
    }

    /// Decodes a greeting; an agent that speaks another protocol version is refused by name.
    public static func decode(_ message: Data) throws(AgentProtocolError) -> AgentGreeting {
        let bytes = Array(message)
        guard bytes.count >= 3, Array(bytes.prefix(2)) == AgentFrame.magic else {
            throw .malformed("not a Latchkey agent greeting")
        }
        guard bytes[2] == AgentFrame.version else {
            throw .malformed("the agent speaks protocol version \(bytes[2]); this client speaks \(AgentFrame.version)")
        }
        guard bytes.count == 4 + challengeLength, bytes[3] == kind else { throw .malformed("not a Latchkey agent greeting") }
        return AgentGreeting(challenge: Data(bytes.suffix(challengeLength)))
    }
}

/// A request to the agent.
public enum AgentRequest: Sendable {
    /// The client's first message: which keychain it wants, and the challenge of the agent's greeting.
    case hello(keychainPath: String, challenge: Data)
    /// The lock state and who the agent takes the caller for.
    case status
    /// Unlock with the passphrase.
    case unlock(passphrase: [UInt8])
    /// Lock.
    case lock
    /// `SecItemAdd`.
    case add([String: WireValue])
    /// `SecItemCopyMatching`.
    case copyMatching([String: WireValue])
    /// `SecItemUpdate`.
    case update([String: WireValue], [String: WireValue])
    /// `SecItemDelete`.
    case delete([String: WireValue])
    /// Add or update in one transaction.
    case upsert([String: WireValue], [String: WireValue])
    /// Register an application (needs the passphrase).
    case register(passphrase: [UInt8], executablePath: String, applicationIdentifier: String, accessGroups: [String])
    /// Remove an application's registration (needs the passphrase).
    case unregister(passphrase: [UInt8], executablePath: String)
    /// The registered applications.
    case listRegistrations
    /// Store the lock settings (needs the passphrase) and apply them at once.
    case updateSettings(passphrase: [UInt8], autoLockAfterSeconds: Int?, lockOnSleep: Bool)

    /// Whether the request acts on items for the caller, so the agent must know exactly which program sends
    /// it (status, unlock, lock and the passphrase-guarded requests need only the user).
    package var needsIdentity: Bool {
        switch self {
        case .add, .copyMatching, .update, .delete, .upsert: true
        case .hello, .status, .unlock, .lock, .register, .unregister, .listRegistrations, .updateSettings: false
        }
    }

    var code: UInt8 {
        switch self {
        case .hello: 1
        case .status: 2
        case .unlock: 3
        case .lock: 4
        case .add: 5
        case .copyMatching: 6
        case .update: 7
        case .delete: 8
        case .upsert: 9
        case .register: 10
        case .unregister: 11
        case .listRegistrations: 12
        case .updateSettings: 13
        }
    }

    /// The message: "LK", version, request id, operation, body.
    public func encoded(id: UInt32) -> Data {
        var writer = ByteWriter(capacity: 256)
        writer.appendRaw(AgentFrame.magic)
        writer.append(AgentFrame.version)
        writer.append(id)
        writer.append(code)
        switch self {
        case .hello(let path, let challenge):
            writer.appendField(path)
            writer.appendField(challenge)
        case .status, .lock, .listRegistrations: break
        case .unlock(let passphrase): writer.appendField(Data(passphrase))
        case .add(let dictionary), .copyMatching(let dictionary), .delete(let dictionary):
            WireValue.dictionary(dictionary as [String: WireValue]).encode(into: &writer)
        case .update(let query, let changes), .upsert(let query, let changes):
            WireValue.dictionary(query as [String: WireValue]).encode(into: &writer)
            WireValue.dictionary(changes as [String: WireValue]).encode(into: &writer)
        case .register(let passphrase, let path, let identifier, let groups):
            writer.appendField(Data(passphrase))
            writer.appendField(path)
            writer.appendField(identifier)
            writer.append(UInt32(groups.count))
            for group in groups { writer.appendField(group) }
        case .unregister(let passphrase, let path):
            writer.appendField(Data(passphrase))
            writer.appendField(path)
        case .updateSettings(let passphrase, let seconds, let sleep):
            writer.appendField(Data(passphrase))
            writer.append(Int64(seconds ?? -1))
            writer.append(sleep ? 1 as UInt8 : 0)
        }
        return writer.data
    }

    /// Decodes a message; refuses anything malformed, including trailing bytes.
    public static func decode(_ message: Data) throws(AgentProtocolError) -> (id: UInt32, request: AgentRequest) {
        let result: Result<(UInt32, AgentRequest), AgentProtocolError> = message.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            do {
                guard try Array(reader.readRawBuffer(2)) == AgentFrame.magic else {
                    throw AgentProtocolError.malformed("not a Latchkey agent message")
                }
                let version = try reader.readByte()
                guard version == AgentFrame.version else {
                    throw AgentProtocolError.malformed("protocol version \(version); this agent speaks \(AgentFrame.version)")
                }
                let id = try reader.readUInt32()
                let request: AgentRequest
                switch try reader.readByte() {
                case 1: request = .hello(keychainPath: try reader.readText(), challenge: try reader.readField())
                case 2: request = .status
                case 3: request = .unlock(passphrase: Array(try reader.readField()))
                case 4: request = .lock
                case 5: request = .add(try dictionary(&reader))
                case 6: request = .copyMatching(try dictionary(&reader))
                case 7: request = .update(try dictionary(&reader), try dictionary(&reader))
                case 8: request = .delete(try dictionary(&reader))
                case 9: request = .upsert(try dictionary(&reader), try dictionary(&reader))
                case 10:
                    let passphrase = Array(try reader.readField())
                    let path = try reader.readText()
                    let identifier = try reader.readText()
                    let count = Int(try reader.readUInt32())
                    guard count <= reader.remaining else { throw AgentProtocolError.malformed("too many access groups") }
                    var groups: [String] = []
                    for _ in 0..<count { groups.append(try reader.readText()) }
                    request = .register(passphrase: passphrase, executablePath: path, applicationIdentifier: identifier,
                                        accessGroups: groups)
                case 11: request = .unregister(passphrase: Array(try reader.readField()), executablePath: try reader.readText())
                case 12: request = .listRegistrations
                case 13:
                    let passphrase = Array(try reader.readField())
                    let seconds = try reader.readInt64()
                    let sleep = try reader.readByte()
                    // The bounds of the timeout are the engine's to check (the same error with and without the agent).
                    guard seconds >= -1, sleep <= 1 else { throw AgentProtocolError.malformed("settings out of range") }
                    request = .updateSettings(passphrase: passphrase, autoLockAfterSeconds: seconds < 0 ? nil : Int(seconds),
                                              lockOnSleep: sleep == 1)
                case let code:
                    throw AgentProtocolError.malformed("unknown operation \(code)")
                }
                guard reader.isAtEnd else { throw AgentProtocolError.malformed("trailing bytes after the request") }
                return .success((id, request))
            } catch let error as AgentProtocolError {
                return .failure(error)
            } catch {
                return .failure(.malformed("the request is truncated"))
            }
        }
        return try result.get()
    }

    private static func dictionary(_ reader: inout ByteReader) throws(AgentProtocolError) -> [String: WireValue] {
        guard case .dictionary(let values) = try WireValue.decode(from: &reader) else {
            throw .malformed("a dictionary was expected")
        }
        return values
    }
}

/// The agent's answer to one request.
public struct AgentResponse: Sendable, Equatable {
    /// The request's id.
    public let id: UInt32
    /// Apple's status.
    public let status: KeychainStatus
    /// The detail of a failure.
    public let detail: String?
    /// The result, if any.
    public let value: WireValue?

    /// Creates a response.
    public init(id: UInt32, status: KeychainStatus, detail: String? = nil, value: WireValue? = nil) {
        self.id = id
        self.status = status
        self.detail = detail
        self.value = value
    }

    /// The message.
    public func encoded() -> Data {
        var writer = ByteWriter(capacity: 64)
        writer.appendRaw(AgentFrame.magic)
        writer.append(AgentFrame.version)
        writer.append(id)
        writer.append(status.rawValue)
        writer.appendField(detail ?? "")
        writer.append(value == nil ? 0 as UInt8 : 1)
        value?.encode(into: &writer)
        return writer.data
    }

    /// Decodes a response.
    public static func decode(_ message: Data) throws(AgentProtocolError) -> AgentResponse {
        let result: Result<AgentResponse, AgentProtocolError> = message.withUnsafeBytes { buffer in
            var reader = ByteReader(buffer)
            do {
                guard try Array(reader.readRawBuffer(2)) == AgentFrame.magic, try reader.readByte() == AgentFrame.version else {
                    throw AgentProtocolError.malformed("not a Latchkey agent response")
                }
                let id = try reader.readUInt32()
                let status = KeychainStatus(rawValue: Int32(bitPattern: try reader.readUInt32()))
                let detail = try reader.readText()
                let hasValue = try reader.readByte()
                let value = hasValue == 1 ? try WireValue.decode(from: &reader) : nil
                guard hasValue <= 1, reader.isAtEnd else { throw AgentProtocolError.malformed("trailing bytes after the response") }
                return .success(AgentResponse(id: id, status: status, detail: detail.isEmpty ? nil : detail, value: value))
            } catch let error as AgentProtocolError {
                return .failure(error)
            } catch {
                return .failure(.malformed("the response is truncated"))
            }
        }
        return try result.get()
    }

    /// Throws the failure as a `KeychainError`; returns the value on success.
    public func result() throws(KeychainError) -> WireValue? {
        guard status == .success else { throw KeychainError(status, detail) }
        return value
    }
}
