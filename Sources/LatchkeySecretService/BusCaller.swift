package import LatchkeyDBus
package import LatchkeyEngine
package import LatchkeyPOSIX

/// What the provider knows of a connection at its first call under the isolated policy, for the agent to
/// say who it is (`SecretServiceProvider.Configuration.identify`).
package struct BusCaller: Sendable {
    /// What the bus daemon recorded when the connection was made: user, process, LSM label.
    package let credentials: Bus.PeerCredentials
    /// How many connections on the bus the daemon attributes to that process now.
    package let connectionsOfProcess: Int
    /// The bus daemon's own process (`CallerGate.busDaemon`), whose sockets tell which of the caller's
    /// sockets are connections to this bus; nil when it could not be found.
    package let busDaemon: ProcessHandle?

    /// Who every program is under the shared policy — the user, seeing the shared items — and what an
    /// unconfined program is under `latchkeyd --program-identity platform`.
    package static let asTheUser = SecretStore.shared

    /// A caller as the provider saw it.
    package init(credentials: Bus.PeerCredentials, connectionsOfProcess: Int, busDaemon: ProcessHandle?) {
        self.credentials = credentials
        self.connectionsOfProcess = connectionsOfProcess
        self.busDaemon = busDaemon
    }
}

/// What the agent fixed of a connection's process when the connection joined the bus (the process, the
/// program it ran, that the connection was its own), and how to say who it is at its first call — as long as
/// the process still runs that program.
package struct ProcessPin: Sendable {
    /// Who the connection acts as, or why it may not act at all (`errSecInteractionNotAllowed` before the
    /// agent's first unlock: asked again at the next call).
    package let resolve: @Sendable () -> Result<PinnedCaller, KeychainError>

    /// A pin.
    package init(resolve: @escaping @Sendable () -> Result<PinnedCaller, KeychainError>) { self.resolve = resolve }
}

/// Who a connection acts as, fixed at its first call, and what must stay true for it to go on acting so.
package struct PinnedCaller: Sendable {
    /// The identity its calls run with.
    package let identity: CallerIdentity
    /// What the log and refusals call it (`registered …`, `flatpak app org.example.App`, `/usr/bin/secret-tool`).
    package let summary: String
    /// Why the connection may no longer act as `identity` (its process ended, or runs another program than
    /// at the first call), or nil while it may. Checked at every call: one `poll` and one `stat`.
    package let invalidation: @Sendable () -> String?
    /// The program as items' access lists name it (issue 53), when it may read other programs' items through
    /// them and be asked about them: nil for one that sees every group, or acts as the user.
    package let program: TrustedProgram?

    /// A pinned caller.
    package init(
        identity: CallerIdentity, summary: String, program: TrustedProgram? = nil,
        invalidation: @escaping @Sendable () -> String?
    ) {
        self.identity = identity
        self.summary = summary
        self.program = program
        self.invalidation = invalidation
    }
}
