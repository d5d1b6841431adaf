package import FoundationEssentials

/// How the gate knows who a caller is, strongest first (docs/LATCHKEY-SECURITY.md, "Who is calling: one
/// gate"). Every front end gets one of these for each caller from `CallerGate`, and only the agent's policy
/// (`CallerPolicy`) turns it into access groups.
package enum Attestation: Sendable, Equatable {
    /// A Flatpak sandbox's app ID (`/.flatpak-info` read through the pinned process's own root): the sandbox
    /// fixes it, whatever program runs inside.
    case sandbox(appID: String)
    /// A confining LSM label the kernel attached to the connection: `apparmor:<profile>` (enforce mode) or
    /// `selinux:<type>`.
    case confined(label: String)
    /// The executable of an unconfined process of the user: its exact path (`PeerIdentity.text(ofPath:)`)
    /// and its BLAKE2b-256 digest. The weakest: a program of the same user that can trace this one, start it
    /// with `LD_PRELOAD` or replace its file acts as it.
    case executable(path: String, digest: Data)
    /// Not to be trusted as any program, and why: another user or pid namespace (without a sandbox), a
    /// deleted or unreadable executable, a stopped or traced process, a connection made before an exec.
    case unidentified(reason: String)

    /// The kind of attestation, as the log and `latchkey doctor` name it.
    package var kind: String {
        switch self {
        case .sandbox: "sandbox app ID"
        case .confined: "LSM label"
        case .executable: "executable of an unconfined process"
        case .unidentified: "unidentified"
        }
    }

    /// Whether the platform attests it (a sandbox or an LSM label), not only the program's file.
    package var isPlatformAttested: Bool {
        switch self {
        case .sandbox, .confined: true
        case .executable, .unidentified: false
        }
    }

    /// The caller as the log and dialogs name it (never a secret).
    package var summary: String {
        switch self {
        case .sandbox(let app): "the Flatpak app \(app)"
        case .confined(let label): "the confined program \(label)"
        case .executable(let path, _): path
        case .unidentified(let reason): "an unidentified program (\(reason))"
        }
    }
}

/// The front ends that pass callers through the gate.
package enum FrontEnd: String, Sendable, CaseIterable {
    case agentSocket = "the agent's socket"
    case sshAgent = "the SSH agent"
    case secretService = "the Secret Service"
    case secretPortal = "the secret portal"
}

/// One caller as the gate attested it: the process (pinned) and how it is known.
package struct AttestedCaller: Sendable {
    /// The process, pinned by its pidfd, with the program it ran when it was attested.
    package let peer: PeerIdentity
    /// How the gate knows who it is.
    package let attestation: Attestation
    /// Which front end it came through.
    package let frontEnd: FrontEnd

    /// A caller.
    package init(peer: PeerIdentity, attestation: Attestation, frontEnd: FrontEnd) {
        self.peer = peer
        self.attestation = attestation
        self.frontEnd = frontEnd
    }

    /// The caller's user.
    package var uid: UInt32 { peer.uid }
    /// The caller's process id.
    package var pid: Int32 { peer.pid }
}
