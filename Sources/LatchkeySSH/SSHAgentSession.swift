package import FoundationEssentials
import LatchkeyEngine

/// Where a signature is going, as far as the agent knows from the connection's session bindings: the user,
/// the host (its name when a destination constraint gave one, else its key's fingerprint) and the hosts the
/// agent was forwarded through.
package struct SSHDestination: Sendable, Hashable {
    /// The user logging in.
    package let user: String
    /// The host's name from the key's destination constraints, if they name it.
    package let hostName: String?
    /// The fingerprint of the host key the session is bound to.
    package let hostKeyFingerprint: String
    /// The hosts the agent is forwarded through, first hop first: each by name (if a constraint gives one) and
    /// fingerprint.
    package let through: [String]

    /// `user@host` when a constraint names the host, else `user to the host with key SHA256:…`.
    package var userAtHost: String {
        hostName.map { user + "@" + $0 } ?? user + " to the host with key " + hostKeyFingerprint
    }
}

/// How a connection's program stands with one key (`SSHAgentSession.Hooks.standing`).
package enum SSHKeyStanding: Sendable, Equatable {
    /// It may list, sign with, replace and remove the key.
    case usable
    /// It sees the key and may sign with it once the user allows it (`Hooks.ask`): a key open to registered
    /// programs only, which this program is neither registered for nor on the access list of (issue 53).
    /// It may not replace or remove it.
    case askFirst
    /// The key is not there for it.
    case hidden
}

/// A use of a key a client asks for, for the agent to allow or refuse (`SSHAgentSession.Hooks.authorize`).
package struct SSHKeyUse: Sendable {
    /// The key.
    package let identity: SSHKeyStore.Identity
    /// Its settings (readable: a key whose settings are damaged is never used).
    package let settings: SSHKeySettings
    /// What is signed.
    package let signed: SSHSignedData
    /// Where a login goes, when the agent could check it: the login is for the very session the connection
    /// bound last (the same session identifier and, when the login names one, the same host key), that
    /// binding is for a login (not a forwarding) and no binding on the connection failed. Nil for other
    /// signatures, and for a login it could not check.
    package let destination: SSHDestination?
    /// For a login without `destination` on a connection that sent `session-bind@openssh.com`: the agent
    /// could not check where it goes (a relayed login — for another session than the one bound last — or
    /// one after a failed binding). False on a connection never bound (the client did not bind its session).
    package let isUnchecked: Bool

    package init(
        identity: SSHKeyStore.Identity, settings: SSHKeySettings, signed: SSHSignedData, destination: SSHDestination?,
        isUnchecked: Bool = false
    ) {
        self.identity = identity
        self.settings = settings
        self.signed = signed
        self.destination = destination
        self.isUnchecked = isUnchecked
    }

    /// What an approval of this use covers besides the key and the program: the destination (user, host key
    /// and forwarding path) of a login, the namespace of an SSHSIG signature.
    package var scope: String {
        if settings.approvalScope == .processTree { return "any use" }
        switch signed {
        case .userAuthentication(let authentication):
            guard let destination else {
                return "login " + authentication.userShown + (isUnchecked ? " unchecked" : " unbound")
            }
            return "login " + destination.user + " " + destination.hostKeyFingerprint + " via "
                + destination.through.joined(separator: ",")
        case .sshsig(let namespace): return "sshsig " + namespace
        case .other: return "other"
        }
    }
}

/// One client connection to the SSH agent: its session bindings (`session-bind@openssh.com`), and every
/// request translated into keychain operations on `SSHKeyStore`. Whether a program may use a key, and
/// whether the user is asked, is the agent's decision, made through `Hooks`; this type holds no identity
/// logic. Not `Sendable`: one connection is served by one thread.
package final class SSHAgentSession {
    /// What the agent decides and provides.
    package struct Hooks: Sendable {
        /// The keychain's SSH keys.
        package let store: SSHKeyStore
        /// The agent's own lock (shared by every connection).
        package let lock: SSHAgentLock
        /// How the connection's program stands with a key of these settings.
        package let standing: @Sendable (SSHKeyStore.Identity, SSHKeySettings) -> SSHKeyStanding
        /// Asks the user whether the program may use an `askFirst` key (the access question, issue 53), or
        /// throws the refusal; returns when it may sign once (or always: then it is on the key's access list).
        package let ask: SSHKeyQuestion
        /// Allows a signature or throws why not (a refusal by the user, no pinentry, a locked keychain).
        package let authorize: SSHKeyAuthorization
        /// Logs a line (no key material, no data signed).
        package let log: @Sendable (String) -> Void

        package init(
            store: SSHKeyStore, lock: SSHAgentLock,
            standing: @escaping @Sendable (SSHKeyStore.Identity, SSHKeySettings) -> SSHKeyStanding,
            ask: @escaping SSHKeyQuestion,
            authorize: @escaping SSHKeyAuthorization, log: @escaping @Sendable (String) -> Void
        ) {
            self.store = store
            self.lock = lock
            self.standing = standing
            self.ask = ask
            self.authorize = authorize
            self.log = log
        }
    }

    private let hooks: Hooks
    /// The sessions this connection is bound to, the first hop first.
    package private(set) var bindings: [SSHSessionBinding] = []
    /// Whether the connection sent `session-bind@openssh.com`, readable or not: then it serves a session with
    /// a host — ssh's own, or a host's the agent is forwarded to — and is what OpenSSH calls a remote socket.
    private var bindAttempted = false
    /// Whether a binding failed (unreadable, not signed by the host, against the rules): then no hop after it
    /// can be vouched for, and the connection's destination-constrained keys are unusable — stricter than
    /// OpenSSH, which refuses them only while no binding has succeeded.
    private var bindFailed = false

    /// OpenSSH's `socket_is_remote`: the connection sent a binding, so it serves a session with another host.
    package var isRemote: Bool { bindAttempted || !bindings.isEmpty }
    /// Who the connection is, for the log.
    private let peer: String

    package init(hooks: Hooks, peer: String) {
        self.hooks = hooks
        self.peer = peer
    }

    /// Answers one message (a frame's body): the reply's body. Nothing a client sends ends the agent or loses
    /// a key: a request that cannot be read or is refused is `SSH_AGENT_FAILURE`.
    package func reply(to message: Data) -> Data {
        let request: SSHAgentRequest
        do {
            request = try SSHAgentRequest.decode(message)
        } catch {
            hooks.log("\(peer): refused a malformed request: \(error)")
            return SSHAgentReply.failure
        }
        if hooks.lock.isLocked {
            switch request {
            case .requestIdentities: return SSHAgentReply.identities([])
            case .unlock(let passphrase):
                let unlocked = hooks.lock.unlock(passphrase)
                hooks.log(
                    "\(peer): \(unlocked ? "unlocked the SSH agent" : "gave a wrong passphrase to unlock the SSH agent")"
                )
                return unlocked ? SSHAgentReply.success : SSHAgentReply.failure
            case .sessionBind(let binding): return bind(binding)
            case .unreadableSessionBind(let error): return refuseUnreadable(error)
            default: return SSHAgentReply.failure
            }
        }
        do throws(KeychainError) {
            switch request {
            case .requestIdentities:
                let visible = try usableIdentities(askFirst: true).filter { isPermitted($0.1.destinations, user: nil) }
                return SSHAgentReply.identities(visible.map { ($0.0.publicKey.blob, $0.0.comment) })
            case .sign(let blob, let data, let flags):
                return try sign(blob: blob, data: data, flags: flags)
            case .add(let key):
                return try add(key)
            case .remove(let blob):
                guard let (identity, settings, _) = try usable(blob), isPermitted(settings.destinations, user: nil)
                else {
                    return SSHAgentReply.failure
                }
                guard !isRemote else { return refuseRemoteRemoval() }
                try hooks.store.remove(identity)
                hooks.log("\(peer): removed the SSH key \(identity.publicKey.fingerprint) from the keychain")
                return SSHAgentReply.success
            case .removeAll(let version1):
                guard !version1 else { return SSHAgentReply.success }  // No SSH-1 keys: none to remove.
                guard !isRemote else { return refuseRemoteRemoval() }
                var removed = 0
                for (identity, settings) in try usableIdentities() where isPermitted(settings.destinations, user: nil) {
                    try hooks.store.remove(identity)
                    removed += 1
                }
                hooks.log("\(peer): removed \(removed) SSH key(s) from the keychain")
                return SSHAgentReply.success
            case .lock(let passphrase):
                let locked = hooks.lock.lock(passphrase)
                if locked { hooks.log("\(peer): locked the SSH agent") }
                return locked ? SSHAgentReply.success : SSHAgentReply.failure
            case .unlock:
                return SSHAgentReply.failure  // Not locked.
            case .sessionBind(let binding):
                return bind(binding)
            case .unreadableSessionBind(let error):
                return refuseUnreadable(error)
            case .queryExtensions:
                return SSHAgentReply.extensions(["session-bind@openssh.com"])
            case .unknownExtension(let name):
                hooks.log("\(peer): the extension \(name) is not supported")
                return SSHAgentReply.failure
            case .unsupported(let type):
                hooks.log("\(peer): the message type \(type) is not supported")
                return SSHAgentReply.failure
            }
        } catch {
            hooks.log("\(peer): \(error)")
            return SSHAgentReply.failure
        }
    }

    /// The keys this connection's program may use now — with `askFirst`, also those it may use once the user
    /// allows it — with their settings: not expired, settings readable. None while the keychain is locked.
    private func usableIdentities(askFirst: Bool = false) throws(KeychainError) -> [(
        SSHKeyStore.Identity, SSHKeySettings
    )] {
        let now = Date()
        do {
            return try hooks.store.identities().compactMap { identity in
                guard let settings = identity.settings, !settings.hasExpired(at: now) else { return nil }
                switch hooks.standing(identity, settings) {
                case .usable: break
                case .askFirst where askFirst: break
                case .askFirst, .hidden: return nil
                }
                return (identity, settings)
            }
        } catch KeychainError.interactionNotAllowed {
            return []  // Locked: no key is listed or used.
        }
    }

    /// The key `blob` names, when this program may use it now — with `askFirst`, also when it may once the
    /// user allows it — and how it stands with it.
    private func usable(_ blob: Data, askFirst: Bool = false) throws(KeychainError) -> (
        SSHKeyStore.Identity, SSHKeySettings, SSHKeyStanding
    )? {
        let identity: SSHKeyStore.Identity?
        do {
            identity = try hooks.store.identity(blob: blob)
        } catch KeychainError.interactionNotAllowed {
            return nil
        }
        guard let identity, let settings = identity.settings, !settings.hasExpired(at: Date()) else { return nil }
        let standing = hooks.standing(identity, settings)
        guard standing == .usable || (askFirst && standing == .askFirst) else { return nil }
        return (identity, settings, standing)
    }

    private func sign(blob: Data, data: Data, flags: UInt32) throws(KeychainError) -> Data {
        guard let (identity, settings, standing) = try usable(blob, askFirst: true) else {
            hooks.log("\(peer): asked to sign with a key it may not use or the keychain does not hold (or is locked)")
            return SSHAgentReply.failure
        }
        let signed = SSHSignedData.parse(data, key: identity.publicKey)
        var destination: SSHDestination?
        var isUnchecked = false
        if case .userAuthentication(let authentication) = signed {
            destination = checkedDestination(of: authentication, settings: settings)
            isUnchecked = destination == nil && isRemote
        }
        if !settings.destinations.isEmpty {
            guard !bindFailed else {
                hooks.log("\(peer): refused a destination-constrained key: a session binding failed on this connection")
                return SSHAgentReply.failure
            }
            guard case .userAuthentication(let authentication) = signed, let last = bindings.last else {
                hooks.log(
                    "\(peer): refused a destination-constrained key for \(bindings.isEmpty ? "a connection not bound to a session" : "a signature that is not a login")"
                )
                return SSHAgentReply.failure
            }
            guard isPermitted(settings.destinations, user: authentication.user) else {
                hooks.log("\(peer): refused a destination-constrained key for a destination it is not allowed")
                return SSHAgentReply.failure
            }
            guard authentication.sessionID == last.sessionID else {
                hooks.log("\(peer): refused a destination-constrained key for another session than the one last bound")
                return SSHAgentReply.failure
            }
            if bindings.count > 1 && authentication.hostKey == nil {
                hooks.log("\(peer): refused a destination-constrained key: a forwarded login that names no host key")
                return SSHAgentReply.failure
            }
            if let hostKey = authentication.hostKey, !hostKey.isSameKey(as: last.hostKey) {
                hooks.log(
                    "\(peer): refused a destination-constrained key: the login names another host key than the session's"
                )
                return SSHAgentReply.failure
            }
        }
        if standing == .askFirst { try hooks.ask(identity) }
        try hooks.authorize(
            SSHKeyUse(
                identity: identity, settings: settings, signed: signed, destination: destination,
                isUnchecked: isUnchecked))
        return SSHAgentReply.signature(try hooks.store.sign(identity, data: data, flags: flags))
    }

    /// Where a login on this connection goes — the last bound host, the hosts before it — when the agent can
    /// tell: the login is for the session bound last (its identifier, and its host key when the login names
    /// one), bound for a login rather than a forwarding, and no binding failed. Otherwise nil: a dialog names
    /// no host for a login it could not check (a relayed login would otherwise show the bound host's name).
    private func checkedDestination(of authentication: SSHUserAuthentication, settings: SSHKeySettings)
        -> SSHDestination?
    {
        guard !bindFailed, let last = bindings.last, !last.isForwarding, authentication.sessionID == last.sessionID
        else { return nil }
        if let hostKey = authentication.hostKey, !hostKey.isSameKey(as: last.hostKey) { return nil }
        func name(_ key: SSHHostKey) -> String? {
            settings.destinations.first { $0.to.matches(key) }?.to.hostname
        }
        let through = bindings.dropLast().map { binding in
            (name(binding.hostKey).map { $0 + " " } ?? "") + binding.hostKey.key.fingerprint
        }
        return SSHDestination(
            user: authentication.userShown, hostName: name(last.hostKey),
            hostKeyFingerprint: last.hostKey.key.fingerprint, through: through)
    }

    private func add(_ request: SSHKeyToAdd) throws(KeychainError) -> Data {
        var settings = SSHKeySettings(
            confirm: request.constraints.confirm,
            expires: request.constraints.lifetimeSeconds.map { Date().addingTimeInterval(Double($0)) },
            destinations: request.constraints.destinations)
        if let existing = try hooks.store.identity(blob: request.privateKey.publicKey.blob) {
            guard let current = existing.settings, hooks.standing(existing, current) == .usable,
                isPermitted(current.destinations, user: nil)
            else {
                hooks.log("\(peer): may not replace an SSH key it may not use")
                return SSHAgentReply.failure
            }
            // Replacing a key's settings from afar could delete it (`ssh-add -t 1`) or loosen it (no `-c`, no
            // `-h`): a forwarded host may add keys, not change one the keychain holds.
            guard !isRemote else {
                hooks.log(
                    "\(peer): refused to replace an SSH key of the keychain for a connection bound to a session (a forwarded agent)"
                )
                return SSHAgentReply.failure
            }
            settings.programs = current.programs
            settings.approvalSeconds = current.approvalSeconds
            settings.approvalScope = current.approvalScope
        }
        try hooks.store.add(request.privateKey, comment: request.comment, settings: settings)
        hooks.log(
            "\(peer): stored the SSH key \(request.privateKey.publicKey.fingerprint) in the keychain"
                + (settings.confirm ? ", confirmed at each use" : "")
                + (settings.expires != nil ? ", for \(request.constraints.lifetimeSeconds ?? 0) s" : "")
                + (settings.destinations.isEmpty ? "" : ", for \(settings.destinations.count) destination(s)"))
        return SSHAgentReply.success
    }

    /// `session-bind@openssh.com`: the host must have signed the session; a connection bound for a login takes
    /// no other binding; a session already bound to another key is refused; at most 16 bindings. Any refusal
    /// is a failed binding (`bindFailed`).
    private func bind(_ binding: SSHSessionBinding) -> Data {
        bindAttempted = true
        guard binding.isSignedByHost else {
            return refuseBinding("refused a session binding whose signature is not the host key's")
        }
        for earlier in bindings {
            guard earlier.isForwarding else {
                return refuseBinding("refused a session binding on a connection already bound for a login")
            }
            if earlier.sessionID == binding.sessionID {
                guard earlier.hostKey.isSameKey(as: binding.hostKey) else {
                    return refuseBinding("refused a session binding of a session already bound to another host key")
                }
                return SSHAgentReply.success  // Already recorded.
            }
        }
        guard bindings.count < SSHAgentLimits.maximumSessionBindings else {
            return refuseBinding("refused a session binding: \(SSHAgentLimits.maximumSessionBindings) already")
        }
        bindings.append(binding)
        let certificate = binding.hostKey.certificate.map { " (a host certificate for \($0.principalsShown))" } ?? ""
        hooks.log(
            "\(peer): bound to a session with host key \(binding.hostKey.key.fingerprint)\(certificate)\(binding.isForwarding ? " (forwarding)" : "")"
        )
        return SSHAgentReply.success
    }

    /// A `session-bind@openssh.com` whose body could not be read: attempted and failed all the same.
    private func refuseUnreadable(_ error: SSHWireError) -> Data {
        bindAttempted = true
        return refuseBinding("refused a session binding that cannot be read (\(error))")
    }

    /// Records a failed binding and answers `SSH_AGENT_EXTENSION_FAILURE`, as OpenSSH does.
    private func refuseBinding(_ reason: String) -> Data {
        bindFailed = true
        hooks.log("\(peer): \(reason); destination-constrained keys are unusable on this connection")
        return SSHAgentReply.extensionFailure
    }

    /// `ssh-add -d` or `-D` on a remote connection (a host the agent is forwarded to): the keychain is the
    /// user's own store, so nothing there is deleted from afar. OpenSSH's agent would forget its keys; a
    /// keychain key is not a copy to forget, so the request is refused instead.
    private func refuseRemoteRemoval() -> Data {
        hooks.log(
            "\(peer): refused to delete SSH keys from the keychain for a connection bound to a session (a forwarded agent)"
        )
        return SSHAgentReply.failure
    }

    /// OpenSSH's `identity_permitted`: whether every hop this connection's bindings record is one the
    /// constraints allow (as `user` at the last, when a login is asked). Unconstrained keys are allowed; a
    /// connection never bound is local use, allowed; one where any binding failed is not.
    package func isPermitted(_ destinations: [SSHDestinationConstraint], user: Data?) -> Bool {
        guard !destinations.isEmpty else { return true }
        if bindFailed || (bindAttempted && bindings.isEmpty) { return false }
        guard let last = bindings.last else { return true }
        var from: SSHHostKey?
        for (index, binding) in bindings.enumerated() {
            var testUser: Data?
            if index == bindings.count - 1 {
                testUser = user
                if binding.isForwarding && user != nil { return false }  // A login on a forwarding hop.
            } else if !binding.isForwarding {
                return false  // Forwarded onward through a hop bound for a login.
            }
            guard destinations.permittedHop(from: from, to: binding.hostKey, user: testUser) != nil else {
                return false
            }
            from = binding.hostKey
        }
        // Listed on a forwarded connection: only a key that may go on from the last host is shown.
        if last.isForwarding && user == nil && destinations.permittedHop(from: last.hostKey, to: nil, user: nil) == nil
        {
            return false
        }
        return true
    }
}
