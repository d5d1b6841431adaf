package import FoundationEssentials

/// What a client asks the agent to sign, as far as the agent can tell: an SSH user authentication (RFC 4252
/// §7; OpenSSH's `publickey-hostbound-v00@openssh.com` adds the server's host key), an SSHSIG signature
/// (`ssh-keygen -Y sign`, OpenSSH's `PROTOCOL.sshsig`: git's commit signatures, namespace `git`), or
/// something else. Prompts name it; destination constraints allow only user authentications.
package enum SSHSignedData: Sendable, Equatable {
    /// A user authentication to a server.
    case userAuthentication(SSHUserAuthentication)
    /// An SSHSIG signature in `namespace`.
    case sshsig(namespace: String)
    /// Anything else.
    case other

    /// What `data` is, for a signature by `key` (a user authentication must name that very key).
    package static func parse(_ data: Data, key: SSHPublicKey) -> SSHSignedData {
        if let authentication = SSHUserAuthentication(data, key: key) { return .userAuthentication(authentication) }
        if let namespace = sshsigNamespace(data) { return .sshsig(namespace: namespace) }
        return .other
    }

    /// SSHSIG's signed blob: `"SSHSIG"`, namespace, reserved, hash algorithm, H(message) — nothing after.
    private static func sshsigNamespace(_ data: Data) -> String? {
        guard data.starts(with: Array("SSHSIG".utf8)) else { return nil }
        var reader = SSHReader(data.dropFirst(6))
        guard let namespace = try? reader.text("the namespace"), (try? reader.string("reserved")) != nil,
            (try? reader.text("the hash algorithm")) != nil, (try? reader.string("the hash")) != nil, reader.isAtEnd
        else { return nil }  // Not SSHSIG's layout: signed data of another kind.
        return namespace
    }

    /// How a prompt names what is signed: `git commit signature` for SSHSIG's `git`, `a signature in namespace
    /// "…"` for another namespace, `user@host` for a user authentication (with the host named by the binding).
    package var summary: String {
        switch self {
        case .userAuthentication(let authentication): "logging in as \(authentication.userShown)"
        case .sshsig(let namespace) where namespace == "git": "git commit signature"
        case .sshsig(let namespace): "a signature in namespace \"\(namespace)\""
        case .other: "data that is neither an SSH login nor an SSHSIG signature"
        }
    }
}

/// A user authentication request's fields that matter to the agent (OpenSSH's `parse_userauth_request`).
package struct SSHUserAuthentication: Sendable, Equatable {
    /// The session it authenticates (the exchange hash).
    package let sessionID: Data
    /// The user it logs in as: bytes, as OpenSSH reads them (any but NUL); matched byte by byte against a
    /// constraint's user pattern.
    package let user: Data
    /// The user as a log line or a dialog shows it (`SSHDisplay`: escaped).
    package var userShown: String { SSHDisplay.escaped(user) }
    /// The server's host key, when the client bound it in (`publickey-hostbound-v00@openssh.com`).
    package let hostKey: SSHHostKey?

    /// `SSH2_MSG_USERAUTH_REQUEST`.
    static let messageNumber: UInt8 = 50

    /// Reads a request signed with `key`: nil unless it is one, for the service `ssh-connection`, with a
    /// signature following, naming `key` itself — and nothing after it.
    init?(_ data: Data, key: SSHPublicKey) {
        var reader = SSHReader(data)
        do throws(SSHWireError) {
            let session = try reader.string("the session identifier")
            guard !session.isEmpty, try reader.byte("the message number") == Self.messageNumber else { return nil }
            let user = try reader.cString("the user")
            let service = try reader.text("the service")
            let method = try reader.text("the method")
            let signatureFollows = try reader.byte("whether a signature follows")
            let algorithm = try reader.text("the algorithm")
            let shown = try SSHPublicKey(blob: try reader.string("the key"))
            guard service == "ssh-connection", signatureFollows == 1, shown.blob == key.blob,
                Self.algorithm(algorithm, suits: key.kind)
            else { return nil }
            var hostKey: SSHHostKey?
            switch method {
            case "publickey-hostbound-v00@openssh.com":
                hostKey = try SSHHostKey(blob: try reader.string("the host key"))
            case "publickey": break
            default: return nil
            }
            guard reader.isAtEnd else { return nil }
            sessionID = session
            self.user = user
            self.hostKey = hostKey
        } catch {
            return nil  // Not a user authentication request.
        }
    }

    /// Whether a signature algorithm's name is one for keys of `kind`.
    static func algorithm(_ name: String, suits kind: SSHPublicKey.Kind) -> Bool {
        switch kind {
        case .rsa: ["ssh-rsa", "rsa-sha2-256", "rsa-sha2-512"].contains(name)
        case .ed25519: name == "ssh-ed25519"
        case .ecdsa(let bits): name == "ecdsa-sha2-" + (SSHPublicKey.curves[bits] ?? "")
        }
    }
}
