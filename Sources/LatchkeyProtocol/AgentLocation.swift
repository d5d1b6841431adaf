import FoundationEssentials
package import LatchkeyEngine
package import LatchkeyPOSIX

/// Where the agent listens, and whether a socket found there may be trusted with a passphrase or a secret.
///
/// The socket is `LATCHKEY_AGENT_SOCKET` when set, else `$XDG_RUNTIME_DIR/latchkey/agent.sock`, else
/// `$XDG_STATE_HOME/latchkey/agent.sock` (`~/.local/state/latchkey/agent.sock`) — never a predictable path
/// in a directory other users can write, such as /tmp. Before a client sends anything it checks, as tmux and
/// ssh do, that the socket's directory is a real directory of its own user with mode 0700 and the socket
/// belongs to that user; after connecting, that the process listening runs as its user (`SO_PEERCRED`).
package enum AgentLocation {
    /// The environment variable that names the socket.
    package static let socketVariable = "LATCHKEY_AGENT_SOCKET"

    /// The socket path.
    package static func socketPath(environment: [String: String] = CurrentProcess.environment) -> String {
        if let path = environment[socketVariable], !path.isEmpty { return path }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/latchkey/agent.sock"
        }
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/latchkey/agent.sock" }
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? CurrentProcess.homeDirectory
        return home + "/.local/state/latchkey/agent.sock"
    }

    /// The environment variable that names the SSH agent's socket.
    package static let sshSocketVariable = "LATCHKEY_SSH_AGENT_SOCKET"

    /// The SSH agent's socket (what `SSH_AUTH_SOCK` names): `LATCHKEY_SSH_AGENT_SOCKET` when set, else
    /// `ssh-agent.sock` beside the agent's socket (`$XDG_RUNTIME_DIR/latchkey/ssh-agent.sock`), in the same
    /// private directory.
    package static func sshSocketPath(
        agentSocket: String, environment: [String: String] = CurrentProcess.environment
    ) -> String {
        if let path = environment[sshSocketVariable], !path.isEmpty { return path }
        let directory = FileSystem.parentDirectory(of: FileSystem.standardizedPath(agentSocket))
        return (directory == "/" ? "" : directory) + "/ssh-agent.sock"
    }

    /// What a client finds at the socket path.
    package enum Finding: Equatable {
        /// No socket (or no directory): no agent runs.
        case absent
        /// A socket in a private directory of this user.
        case trusted
    }

    /// Checks the socket's directory and the socket before anything is sent: `.absent` when there is no
    /// socket, `.trusted` when both belong to this user and the directory is private; anything else is
    /// refused with `errSecWrPerm` and a message that says what is wrong.
    package static func inspect(_ socketPath: String) throws(KeychainError) -> Finding {
        let directory = FileSystem.parentDirectory(of: FileSystem.standardizedPath(socketPath))
        let me = CurrentProcess.effectiveUserID
        guard let folder = FileStatus.of(path: directory) else { return .absent }
        func untrusted(_ why: String) -> KeychainError {
            KeychainError(
                .writePermission, "the agent socket \(socketPath) is not safe to use: \(why); nothing was sent to it")
        }
        guard folder.kind == .directory else { throw untrusted("\(directory) is not a directory (a symbolic link?)") }
        guard folder.owner == me else {
            throw untrusted("its directory \(directory) belongs to another user (uid \(folder.owner))")
        }
        guard !folder.isAccessibleByOthers else {
            throw untrusted("its directory \(directory) has mode \(folder.octalPermissions), not 0700")
        }
        guard let socket = FileStatus.of(path: socketPath) else { return .absent }
        guard socket.kind == .socket else { throw untrusted("it is not a socket") }
        guard socket.owner == me else { throw untrusted("it belongs to another user (uid \(socket.owner))") }
        return .trusted
    }

    /// Checks, after connecting and before sending, that the listening process runs as this user.
    package static func verifyListener(_ descriptor: FileDescriptor, socketPath: String) throws(KeychainError) {
        let me = CurrentProcess.effectiveUserID
        guard let peer = UnixSocket.peerCredentials(descriptor) else {
            throw KeychainError(
                .writePermission, "cannot tell who listens on the agent socket \(socketPath); nothing was sent to it")
        }
        guard peer.uid == me else {
            throw KeychainError(
                .writePermission,
                "the process listening on \(socketPath) (pid \(peer.pid)) runs as uid \(peer.uid), not as this user; nothing was sent to it"
            )
        }
    }
}
