package import FoundationEssentials

/// What `session-bind@openssh.com` tells the agent (`PROTOCOL.agent` §1): that this connection serves an
/// SSH session with a host — the host key, the session's identifier (the key exchange's hash), the host's
/// signature of it, and whether the connection forwards the agent onward from that host or authenticates
/// to it.
package struct SSHSessionBinding: Sendable, Hashable {
    package let hostKey: SSHHostKey
    package let sessionID: Data
    package let signature: Data
    package let isForwarding: Bool

    package init(hostKey: SSHHostKey, sessionID: Data, signature: Data, isForwarding: Bool) {
        self.hostKey = hostKey
        self.sessionID = sessionID
        self.signature = signature
        self.isForwarding = isForwarding
    }

    static func read(_ reader: inout SSHReader) throws(SSHWireError) -> SSHSessionBinding {
        let hostKey = try SSHHostKey(blob: try reader.string("the host key"))
        let sessionID = try reader.string("the session identifier")
        let signature = try reader.string("the host's signature")
        let forwarding = try reader.boolean("whether the connection forwards")
        try reader.expectEnd("the session binding")
        guard !sessionID.isEmpty, sessionID.count <= SSHAgentLimits.maximumSessionIDBytes else {
            throw SSHWireError(
                "a session identifier is 1 to \(SSHAgentLimits.maximumSessionIDBytes) bytes, not \(sessionID.count)")
        }
        return SSHSessionBinding(hostKey: hostKey, sessionID: sessionID, signature: signature, isForwarding: forwarding)
    }

    /// Whether the host key signed the session identifier.
    package var isSignedByHost: Bool { SSHSignature.verify(signature, by: hostKey.key, of: sessionID) }
}
