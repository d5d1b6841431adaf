/// Framing on the agent socket: a 4-byte big-endian length, then the message — `"LK"`, the protocol
/// version, and the body.
package enum AgentFrame {
    /// The largest message (a 16 MiB secret with room for its item).
    package static let maximumBytes = 20 << 20
    /// The protocol version this code speaks (8: macOS's subject filters in queries; 7: ephemeral keys released; 6:
    /// identities in one request; 5: keys the agent holds; 4: certificate filters in queries; 3: typed messages; 2
    /// added the agent's greeting).
    package static let version: UInt8 = 8
    static let magic = Array("LK".utf8)
    /// How long a client waits for a reply (`AgentStream.connect`'s timeout).
    package static let replySeconds = 30
    /// How long a client waits for a reply that may first ask the user (pinentry's own timeout is 120 s).
    package static let userAnswerSeconds = 300
    /// How long a client polls for a reply before sleeping, until `ReplyWait` has timed that kind of request:
    /// most requests are answered within it (a lookup in tens of microseconds), and a sleeping thread takes
    /// tens of microseconds more to wake.
    package static let replySpinNanoseconds = 250_000
    /// How long the agent polls a connection for the client's next request after answering one: a program
    /// that makes several requests in a row (a listing, then a read) sends the next within microseconds.
    package static let requestSpinNanoseconds = 100_000
    /// How long the agent polls for a connection's first requests after the hello (the status a client sends
    /// with it, then its first real request), before `requestSpinNanoseconds` applies: a process just started
    /// takes 90–230 µs between the status's answer and its first request here — the first run of the code that
    /// routes and encodes it — and an agent asleep by then adds its wake-up to that request's answer
    /// (docs/DESIGN-NOTES.md, "The CLI's start"). Once per connection.
    package static let firstRequestSpinNanoseconds = 400_000
    /// How long the agent polls a new connection for the client's hello after greeting it: a client answers
    /// at once, in the time its first use of the protocol's code takes (tens of microseconds in a process
    /// just started), which a sleeping thread would add its wake-up to (docs/DESIGN-NOTES.md, "The CLI's
    /// start").
    package static let helloSpinNanoseconds = 250_000
}

/// Why a message from the other side of the agent socket was refused.
package enum AgentProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Bytes that do not decode as a message.
    case malformed(String)
    /// A frame above the size limit.
    case oversized(Int)
    /// A message the conversation did not allow at that point (a request before hello, a repeated id).
    case outOfOrder(String)

    package var description: String {
        switch self {
        case .malformed(let reason): "malformed message: \(reason)"
        case .oversized(let size): "message of \(size) bytes is larger than the limit of \(AgentFrame.maximumBytes)"
        case .outOfOrder(let reason): "message out of order: \(reason)"
        }
    }
}

/// The agent's first frame on every connection: a fresh random challenge, sent after the agent has
/// identified the process that connected. The client's hello must carry it back, so every request on the
/// connection was written after that identification (a program cannot queue requests and then exec another
/// program to be identified as that one).
package struct AgentGreeting: Sendable, Equatable {
    /// The challenge's length in bytes.
    package static let challengeLength = 16
    private static let kind = UInt8(ascii: "G")
    /// The random challenge.
    package let challenge: [UInt8]

    /// A greeting with this challenge.
    package init(challenge: some Sequence<UInt8>) { self.challenge = Array(challenge) }

    /// The message: "LK", version, "G", challenge.
    package func encoded() -> [UInt8] { AgentFrame.magic + [AgentFrame.version, Self.kind] + challenge }

    /// Decodes a greeting; an agent that speaks another protocol version is refused by name.
    package static func decode(_ bytes: some Collection<UInt8>) throws(AgentProtocolError) -> AgentGreeting {
        let bytes = Array(bytes)
        guard bytes.count >= 3, Array(bytes.prefix(2)) == AgentFrame.magic else {
            throw .malformed("not a Latchkey agent greeting")
        }
        guard bytes[2] == AgentFrame.version else {
            throw .malformed("the agent speaks protocol version \(bytes[2]); this client speaks \(AgentFrame.version)")
        }
        guard bytes.count == 4 + challengeLength, bytes[3] == kind else {
            throw .malformed("not a Latchkey agent greeting")
        }
        return AgentGreeting(challenge: bytes.suffix(challengeLength))
    }
}
