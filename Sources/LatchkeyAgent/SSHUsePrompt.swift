import FoundationEssentials
import LatchkeySSH

/// The text pinentry shows before an SSH key is used: which key, for what — `user@host` with the host key's
/// fingerprint and the forwarding path for a login the agent could check against the session bound last
/// (from `session-bind@openssh.com`), "git commit signature" for SSHSIG's `git` namespace — which program
/// asks, and what one approval covers. Names a peer chose (the user, an SSHSIG namespace) are shown escaped
/// (`SSHDisplay`): none can start a line of its own.
enum SSHUsePrompt {
    static func text(for use: SSHKeyUse, program: String, pid: Int32) -> String {
        let name = use.identity.comment.isEmpty ? "" : " \"\(use.identity.comment)\""
        var lines = ["Allow the SSH key\(name) (\(use.identity.publicKey.fingerprint)) for \(purpose(use))?"]
        if let destination = use.destination {
            lines.append("Host key: \(destination.hostKeyFingerprint)")
            lines.append(
                destination.through.isEmpty
                    ? "Connection: direct from this computer"
                    : "Forwarded through: " + destination.through.joined(separator: " > "))
        }
        lines.append("Asked by: \(program) (pid \(pid))")
        let seconds = use.settings.approvalSeconds
        if seconds > 0 {
            let what =
                use.settings.approvalScope == .processTree
                ? "any destination" : "the same \(use.signed.isLogin ? "destination" : "purpose")"
            lines.append(
                "Allowing covers this program's further uses of this key for \(what) for \(seconds) \(seconds == 1 ? "second" : "seconds"), until the keychain or the agent locks."
            )
        }
        return lines.joined(separator: "\n")
    }

    private static func purpose(_ use: SSHKeyUse) -> String {
        switch use.signed {
        case .userAuthentication(let authentication):
            if let destination = use.destination { return "logging in as " + destination.userAtHost }
            return "logging in as " + authentication.userShown
                + (use.isUnchecked
                    ? " to a host the agent could not check (the login is not for the session this connection last bound)"
                    : " on a host the agent cannot name (the client did not bind its session)")
        case .sshsig(let namespace) where namespace == "git": return "a git commit signature"
        case .sshsig(let namespace): return "a signature in the namespace \"\(SSHDisplay.escaped(namespace))\""
        case .other: return "signing data that is neither an SSH login nor an SSHSIG signature"
        }
    }
}

extension SSHSignedData {
    /// Whether this is a login.
    var isLogin: Bool { if case .userAuthentication = self { true } else { false } }
}
