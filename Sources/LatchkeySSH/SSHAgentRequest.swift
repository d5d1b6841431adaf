package import FoundationEssentials
package import LatchkeyCrypto

/// The message numbers of the SSH agent protocol (draft-miller-ssh-agent, now RFC 9987; OpenSSH's `authfd.h`).
package enum SSHAgentMessageNumber {
    package static let failure: UInt8 = 5
    package static let success: UInt8 = 6
    package static let removeAllVersion1: UInt8 = 9
    package static let requestIdentities: UInt8 = 11
    package static let identitiesAnswer: UInt8 = 12
    package static let signRequest: UInt8 = 13
    package static let signResponse: UInt8 = 14
    package static let addIdentity: UInt8 = 17
    package static let removeIdentity: UInt8 = 18
    package static let removeAllIdentities: UInt8 = 19
    package static let lock: UInt8 = 22
    package static let unlock: UInt8 = 23
    package static let addIdentityConstrained: UInt8 = 25
    package static let `extension`: UInt8 = 27
    package static let extensionFailure: UInt8 = 28
    package static let extensionResponse: UInt8 = 29

    /// Constraint types of an add (`SSH_AGENT_CONSTRAIN_*`).
    package static let constrainLifetime: UInt8 = 1
    package static let constrainConfirm: UInt8 = 2
    package static let constrainExtension: UInt8 = 255
}

/// The limits the agent holds requests to (OpenSSH's own, `ssh-agent.c`).
package enum SSHAgentLimits {
    /// The largest message: 256 KiB.
    package static let maximumMessageBytes = 256 * 1024
    /// Session bindings per connection (a forwarding chain this long at most).
    package static let maximumSessionBindings = 16
    /// The longest session identifier (an exchange hash).
    package static let maximumSessionIDBytes = 128
    /// Destination constraints per key.
    package static let maximumDestinationConstraints = 1024
    /// The longest user name pattern of a constraint.
    package static let maximumUserPatternBytes = 256
}

/// A key `ssh-add` gives the agent: the key, its comment and its constraints.
package struct SSHKeyToAdd: Sendable {
    package let privateKey: SSHPrivateKey
    package let comment: String
    package let constraints: SSHKeyConstraints
}

/// What an add asks of the key's use (`ssh-add -t`, `-c`, `-h`).
package struct SSHKeyConstraints: Sendable, Equatable {
    /// `-t`: the key goes after this many seconds.
    package var lifetimeSeconds: UInt32?
    /// `-c`: every use asks the user.
    package var confirm = false
    /// `-h`: where the key may be used (`restrict-destination-v00@openssh.com`); empty for anywhere.
    package var destinations: [SSHDestinationConstraint] = []

    package init(lifetimeSeconds: UInt32? = nil, confirm: Bool = false, destinations: [SSHDestinationConstraint] = []) {
        self.lifetimeSeconds = lifetimeSeconds
        self.confirm = confirm
        self.destinations = destinations
    }
}

/// One request of a client, decoded. Anything the agent does not do decodes to `.unsupported`, which is
/// answered `SSH_AGENT_FAILURE`; bytes that do not decode are an `SSHWireError`, answered the same way.
package enum SSHAgentRequest: Sendable {
    case requestIdentities
    case sign(keyBlob: Data, data: Data, flags: UInt32)
    case add(SSHKeyToAdd)
    case remove(keyBlob: Data)
    /// `SSH2_AGENTC_REMOVE_ALL_IDENTITIES`, or the SSH-1 form `ssh-add -D` also sends (which removes nothing:
    /// this agent holds no SSH-1 keys).
    case removeAll(version1: Bool)
    case lock(SecureBytes)
    case unlock(SecureBytes)
    case sessionBind(SSHSessionBinding)
    /// A `session-bind@openssh.com` whose body cannot be read (cut short, a host key of a kind this agent does
    /// not read, …): still a binding attempted — the connection is a remote one from then on, and its
    /// destination-constrained keys are unusable (OpenSSH's agent marks the attempt before it parses too).
    case unreadableSessionBind(SSHWireError)
    /// The `query` extension: which extensions the agent supports.
    case queryExtensions
    case unknownExtension(String)
    case unsupported(UInt8)

    /// Decodes one message (the frame's body: its type byte and contents).
    package static func decode(_ message: Data) throws(SSHWireError) -> SSHAgentRequest {
        var reader = SSHReader(message)
        let type = try reader.byte("the message type")
        switch type {
        case SSHAgentMessageNumber.requestIdentities:
            try reader.expectEnd("the request")
            return .requestIdentities
        case SSHAgentMessageNumber.signRequest:
            let key = try reader.string("the key")
            let data = try reader.string("the data to sign")
            let flags = try reader.uint32("the flags")
            try reader.expectEnd("the sign request")
            return .sign(keyBlob: key, data: data, flags: flags)
        case SSHAgentMessageNumber.addIdentity, SSHAgentMessageNumber.addIdentityConstrained:
            let key = try SSHPrivateKey.read(&reader)
            let comment = try reader.text("the comment")
            let constraints = try readConstraints(&reader)
            return .add(SSHKeyToAdd(privateKey: key, comment: comment, constraints: constraints))
        case SSHAgentMessageNumber.removeIdentity:
            let key = try reader.string("the key")
            try reader.expectEnd("the remove request")
            return .remove(keyBlob: key)
        case SSHAgentMessageNumber.removeAllIdentities, SSHAgentMessageNumber.removeAllVersion1:
            try reader.expectEnd("the request")
            return .removeAll(version1: type == SSHAgentMessageNumber.removeAllVersion1)
        case SSHAgentMessageNumber.lock, SSHAgentMessageNumber.unlock:
            let passphrase = try reader.secretString("the passphrase")
            try reader.expectEnd("the passphrase")
            return type == SSHAgentMessageNumber.lock ? .lock(passphrase) : .unlock(passphrase)
        case SSHAgentMessageNumber.extension:
            let name = try reader.text("the extension's name")
            switch name {
            case "session-bind@openssh.com":
                do {
                    return .sessionBind(try SSHSessionBinding.read(&reader))
                } catch {
                    return .unreadableSessionBind(error)
                }
            case "query":
                try reader.expectEnd("the query")
                return .queryExtensions
            default: return .unknownExtension(String(name.prefix(128)))
            }
        default:
            return .unsupported(type)
        }
    }

    private static func readConstraints(_ reader: inout SSHReader) throws(SSHWireError) -> SSHKeyConstraints {
        var constraints = SSHKeyConstraints()
        var sawDestinations = false
        while !reader.isAtEnd {
            switch try reader.byte("a constraint's type") {
            case SSHAgentMessageNumber.constrainLifetime:
                guard constraints.lifetimeSeconds == nil else { throw SSHWireError("the lifetime is given twice") }
                constraints.lifetimeSeconds = try reader.uint32("the lifetime")
            case SSHAgentMessageNumber.constrainConfirm:
                guard !constraints.confirm else { throw SSHWireError("confirmation is asked twice") }
                constraints.confirm = true
            case SSHAgentMessageNumber.constrainExtension:
                let name = try reader.text("the constraint extension's name")
                guard name == "restrict-destination-v00@openssh.com" else {
                    throw SSHWireError("the constraint \(name.prefix(64)) is not supported")
                }
                guard !sawDestinations else { throw SSHWireError("destination constraints are given twice") }
                sawDestinations = true
                var list = try reader.nested("the destination constraints")
                while !list.isAtEnd {
                    guard constraints.destinations.count < SSHAgentLimits.maximumDestinationConstraints else {
                        throw SSHWireError(
                            "more than \(SSHAgentLimits.maximumDestinationConstraints) destination constraints")
                    }
                    constraints.destinations.append(try SSHDestinationConstraint.read(&list))
                }
            case let other:
                throw SSHWireError("the constraint \(other) is not supported")
            }
        }
        return constraints
    }
}

/// Replies of the agent.
package enum SSHAgentReply {
    /// `SSH_AGENT_SUCCESS`.
    package static var success: Data { Data([SSHAgentMessageNumber.success]) }
    /// `SSH_AGENT_FAILURE`.
    package static var failure: Data { Data([SSHAgentMessageNumber.failure]) }
    /// `SSH_AGENT_EXTENSION_FAILURE`.
    package static var extensionFailure: Data { Data([SSHAgentMessageNumber.extensionFailure]) }

    /// `SSH2_AGENT_IDENTITIES_ANSWER`: each key's blob and comment.
    package static func identities(_ keys: [(blob: Data, comment: String)]) -> Data {
        var writer = SSHWriter()
        writer.byte(SSHAgentMessageNumber.identitiesAnswer)
        writer.uint32(UInt32(keys.count))
        for key in keys {
            writer.string(key.blob)
            writer.string(key.comment)
        }
        return writer.data
    }

    /// `SSH2_AGENT_SIGN_RESPONSE`.
    package static func signature(_ blob: Data) -> Data {
        var writer = SSHWriter()
        writer.byte(SSHAgentMessageNumber.signResponse)
        writer.string(blob)
        return writer.data
    }

    /// The `query` extension's answer: the extensions supported.
    package static func extensions(_ names: [String]) -> Data {
        var writer = SSHWriter()
        writer.byte(SSHAgentMessageNumber.extensionResponse)
        writer.string("query")
        for name in names { writer.string(name) }
        return writer.data
    }
}
