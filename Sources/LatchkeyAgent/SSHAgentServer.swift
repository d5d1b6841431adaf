import FoundationEssentials
import LatchkeyCaller
import LatchkeyEngine
import LatchkeyPOSIX
import LatchkeyProtocol
import LatchkeySSH

/// The OpenSSH agent protocol on its own socket (`ssh-agent.sock`, beside the agent's): `ssh`, `ssh-add` and
/// `ssh-keygen -Y sign` use the keychain's SSH keys through it (`SSH_AUTH_SOCK`). Each connection is served on
/// its own thread, identified as the agent's own connections are (`PeerIdentity`: another user is refused;
/// the same per-message credentials; a process in another user or pid namespace is unidentified), and its
/// program decides which keys it may use (`SSHKeySettings.Programs`, through `CallerPolicy`). The protocol
/// itself is `SSHAgentSession`'s.
final class SSHAgentServer: Sendable {
    let state: AgentState
    let socketPath: String
    private let listener: FileDescriptor
    private let presence: PinentryPresence?
    private let budget: ByteBudget
    private let log: @Sendable (String) -> Void
    let approvals = SSHApprovals()
    let lock: SSHAgentLock

    /// An idle connection is closed after this long.
    static let idleSeconds = 600

    /// Whether the listening socket is systemd's (it removes it, not the agent).
    let isInherited: Bool

    /// Listens on `socketPath` (in a private directory, as the agent's socket), or takes `inherited` (systemd's).
    init(
        socketPath: String, inherited: FileDescriptor? = nil, state: AgentState, presence: PinentryPresence?,
        budget: ByteBudget,
        log: @escaping @Sendable (String) -> Void
    ) throws(KeychainError) {
        self.socketPath = socketPath
        self.state = state
        self.presence = presence
        self.budget = budget
        self.log = log
        let approvals = approvals
        lock = SSHAgentLock(onLock: { approvals.clear() })
        isInherited = inherited != nil
        if let inherited {
            listener = inherited
        } else {
            listener = try AgentServer.listen(at: socketPath)
        }
        // On the listener too: an SSH client writes its first request as soon as it connects, before the
        // connection is accepted, and only a socket that asked for them before the bytes were sent gets their
        // sender's credentials (accepted connections inherit the setting).
        do {
            try UnixSocket.enableSenderCredentials(listener)
        } catch {
            throw KeychainError(.io, "cannot ask for message credentials on \(socketPath): \(error)")
        }
        log(
            inherited == nil
                ? "SSH agent listening on \(socketPath) (SSH_AUTH_SOCK=\(socketPath))"
                : "SSH agent listening on the second socket systemd passed")
    }

    /// Accepts connections on a thread of its own; removes expired keys (`ssh-add -t`) every second.
    func start() {
        DetachedThread.start(name: "ssh-accept") { [self] in acceptForever() }
        DetachedThread.start(name: "ssh-expiry") { [self] in
            while true {
                CurrentThread.sleep(for: .seconds(1))
                if state.keychain.lockState != .unlocked { approvals.clear() }
                do {
                    for comment in try SSHKeyStore(service: state.service(for: SSHKeyStore.caller)).removeExpired() {
                        log("removed the SSH key \"\(comment)\" from the keychain: its lifetime is over")
                    }
                } catch {
                    log("could not remove expired SSH keys: \(error)")
                }
            }
        }
    }

    private func acceptForever() -> Never {
        ConnectionListener.acceptForever(listener, label: "SSH agent: ", log: log) { stream in
            { [self] in serve(stream) }
        }
    }

    /// Serves one connection until it closes or breaks a rule.
    private func serve(_ stream: AgentStream) {
        do {
            try UnixSocket.enableSenderCredentials(stream.descriptor)
        } catch {
            log("SSH agent: cannot read message credentials on a connection (\(error)); closing it")
            return
        }
        stream.setTimeout(seconds: Self.idleSeconds)
        guard let caller = CallerGate.attest(streamPeer: stream.descriptor, frontEnd: .sshAgent, digests: state.digests)
        else {
            log("SSH agent: cannot read a peer's credentials; closing the connection")
            return
        }
        let peer = caller.peer
        guard peer.uid == CurrentProcess.effectiveUserID else {
            log("SSH agent: refused pid \(peer.pid): uid \(peer.uid) is not the agent's user")
            return
        }
        if case .unidentified(let reason) = caller.attestation {
            log("SSH agent: unidentified connection: \(reason); it may use only keys open to any program")
        }
        let program = peer.executablePath ?? "an unknown program"
        let tree = ProcessTree.of(peer.handle)
        let session = SSHAgentSession(
            hooks: hooks(for: caller, connection: stream.descriptor, program: program, tree: tree),
            peer: "pid \(peer.pid) (\(peer.executableName))")
        let sender = UnixSocket.Credentials(pid: peer.pid, uid: peer.uid, gid: 0)
        while true {
            var message: Data
            do {
                message = try stream.receive(limit: SSHAgentLimits.maximumMessageBytes, budget: budget, from: sender)
            } catch .oversized(let size) {
                log(
                    "SSH agent: closed the connection of pid \(peer.pid): a \(size)-byte message is over the limit of \(SSHAgentLimits.maximumMessageBytes) or the agent's buffer budget"
                )
                return
            } catch .foreignSender(let reason) {
                log("SSH agent: refused pid \(peer.pid): \(reason); closing the connection")
                return
            } catch {
                return  // Closed, broken or idle too long.
            }
            defer { message.resetBytes(in: 0..<message.count) }  // A private key or a lock passphrase may be in it.
            if let mismatch = peer.mismatch(sender: sender, digests: state.digests) {
                log("SSH agent: refused pid \(peer.pid): \(mismatch); closing the connection")
                return  // Not answered: the answer could reach another program than the one identified.
            }
            state.touch()
            var reply = session.reply(to: message)
            defer { reply.resetBytes(in: 0..<reply.count) }
            do {
                try stream.send(reply)
            } catch {
                return
            }
        }
    }

    /// Whether the attested process holds this connection now (`CallerGate.holdsConnection`); logs why not.
    private static func holding(
        _ caller: AttestedCaller, _ connection: FileDescriptor, log: @Sendable (String) -> Void
    ) -> Bool {
        guard let reason = CallerGate.holdsConnection(caller.peer, ourEnd: connection) else { return true }
        log("SSH agent: refused a key open to registered programs to pid \(caller.peer.pid): \(reason)")
        return false
    }

    /// What a connection's program may do: the keys open to it, and the confirmations of `ssh-add -c` keys.
    ///
    /// A key open only to registered programs is used only when the request is the registered program's own:
    /// it came from the process the gate attested, which still runs that file (checked for every message) and
    /// holds this connection as a close-on-exec descriptor now (`CallerGate.holdsConnection`). SSH clients
    /// write their first request before the agent has identified them, so that request may predate an `exec`;
    /// a connection the program running now did not open fails the hold check, whatever the order.
    ///
    /// Another program the gate identifies (issue 53) may use such a key when it is on the key item's access
    /// list; otherwise, when the user can be asked, it sees the key and its first signature asks (Deny, Allow
    /// once, Always allow — which puts it on the list). It never replaces or removes the key. Without a
    /// display or terminal to ask on, the key is not there for it, as before.
    private func hooks(
        for caller: AttestedCaller, connection: FileDescriptor, program: String, tree: ProcessTree?
    ) -> SSHAgentSession.Hooks {
        let peer = caller.peer
        let state = state
        let approvals = approvals
        let lock = lock
        let presence = presence
        let log = log
        let trusted = CallerPolicy.program(of: caller, identity: state.programIdentity)
        let standing: @Sendable (SSHKeyStore.Identity, SSHKeySettings) -> SSHKeyStanding = { identity, settings in
            guard case .registered(let allowed) = settings.programs else { return .usable }
            var mayBeAsked = true
            if let registrations = state.currentRegistrations {
                switch CallerPolicy.standing(of: caller, registrations: registrations, identity: state.programIdentity)
                {
                case .registered(let registration):
                    if allowed.isEmpty || allowed.contains(registration.applicationIdentifier) {
                        return Self.holding(caller, connection, log: log) ? .usable : .hidden
                    }
                    // A program registered --wildcard is never asked: it was given what it was meant to have.
                    mayBeAsked = !registration.caller.hasWildcard
                case .refused:
                    mayBeAsked = false  // A registered program that changed: registering it again is the remedy.
                case .unregistered, .unidentified:
                    break
                }
            }
            // Not registered for the key: a program the gate identifies may still be on the key's access list,
            // or be asked (issue 53) — never an unidentified one, nor one that does not hold this connection.
            guard let trusted, mayBeAsked, Self.holding(caller, connection, log: log) else { return .hidden }
            if state.isListed(trusted, onItem: identity.reference) { return .usable }
            return state.canAskAboutAccess ? .askFirst : .hidden
        }
        let ask: @Sendable (SSHKeyStore.Identity) throws(KeychainError) -> Void = { (identity) throws(KeychainError) in
            let refusal = KeychainError(.missingEntitlement, "the SSH key is open to registered programs only")
            guard let trusted else { throw refusal }
            let answer = try state.askAccess(
                trusted, pid: peer.pid, reference: identity.reference, itemClass: .key,
                names: "the SSH key \(identity.comment) (\(identity.publicKey.fingerprint))", storedBy: nil,
                refusal: refusal)
            log(
                "SSH agent: pid \(peer.pid) may use the SSH key \(identity.publicKey.fingerprint) "
                    + (answer == .alwaysAllow ? "from now on (on its access list)" : "once"))
        }
        let authorize: SSHKeyAuthorization = { (use) throws(KeychainError) in
            let (lockState, keychainEpoch) = state.keychain.lockStateAndEpoch
            guard lockState == .unlocked else { throw KeychainError(.interactionNotAllowed, "the keychain is locked") }
            guard use.settings.confirm else { return }
            let epochs = (keychain: keychainEpoch, agent: lock.epoch)
            let label = use.identity.publicKey.applicationLabel
            if approvals.covers(keyLabel: label, tree: tree, scope: use.scope, epochs: epochs) { return }
            guard let presence else {
                throw KeychainError(
                    .interactionNotAllowed,
                    "the SSH key asks for confirmation, and the agent has no pinentry to ask with")
            }
            try presence.confirmUse(SSHUsePrompt.text(for: use, program: program, pid: peer.pid))
            // Locked while the user was asked: the answer came too late.
            let now = state.keychain.lockStateAndEpoch
            guard !lock.isLocked, now.state == .unlocked, now.epoch == keychainEpoch else {
                throw KeychainError(
                    .interactionNotAllowed, "the keychain or the SSH agent locked while the user was asked")
            }
            approvals.grant(
                keyLabel: label, tree: tree, scope: use.scope, seconds: use.settings.approvalSeconds, epochs: epochs)
        }
        return SSHAgentSession.Hooks(
            store: SSHKeyStore(
                service: state.service(for: SSHKeyStore.caller, logged: AccessLogEntry.Caller(caller)),
                lookup: state.service(for: SSHKeyStore.caller)),
            lock: lock, standing: standing, ask: ask, authorize: authorize, log: log)
    }
}
