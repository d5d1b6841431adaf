import FoundationEssentials
import LatchkeyDBus
import LatchkeyEngine
import LatchkeyPOSIX

/// Who each connection acts as: the user behind it under the shared policy; under isolation, its process
/// pinned when it joins the bus and what the agent decided of it (docs/LATCHKEY-SECURITY.md, "The Secret
/// Service"). The standings are kept in SecretServiceServer.swift.
extension SecretServiceServer {
    /// Who the sender of `message` acts as: another user's program is refused; under isolation, what the
    /// agent decided of the connection, as long as it holds (docs/LATCHKEY-SECURITY.md, "The Secret Service").
    func caller(for message: BusMessage) throws -> CallerIdentity { try caller(of: message.sender) }

    /// Who connection `sender` acts as (`caller(for:)`).
    func caller(of sender: String) throws -> CallerIdentity {
        switch configuration.policy {
        case .shared:
            let (uid, pid): (UInt32, Int32)
            if let known = peers[sender] {
                (uid, pid) = known
            } else {
                (uid, pid) = try bus.credentials(of: sender)
                peers[sender] = (uid, pid)
            }
            try checkUser(uid, pid: pid)
            return SecretStore.shared
        case .isolated:
            return try isolatedCaller(sender)
        }
    }

    private func checkUser(_ uid: UInt32, pid: Int32) throws {
        guard uid == CurrentProcess.userID else {
            configuration.log("refused a Secret Service call from pid \(pid): uid \(uid) is not the agent's user")
            throw SecretServiceError.accessDenied("programs of another user (uid \(uid)) are refused")
        }
    }

    private func isolatedCaller(_ sender: String) throws -> CallerIdentity {
        if standings[sender] == nil { try pin(sender) }
        switch standings[sender] {
        case .refused(let reason): throw SecretServiceError.accessDenied(reason)
        case .identified(let caller):
            guard let reason = caller.invalidation() else { return caller.identity }
            try refuse(sender, "\(reason); its connection is refused from now on")
        case .pinned(let pin):
            switch pin.resolve() {
            case .success(let caller):
                standings[sender] = .identified(caller)
                configuration.log("Secret Service connection \(sender) acts as \(caller.summary)")
                return caller.identity
            case .failure(let error) where error.status == .interactionNotAllowed:
                throw error  // Registrations still sealed: asked again at the next call.
            case .failure(let error):
                try refuse(sender, error.detail ?? error.message)
            }
        case nil:
            try refuse(sender, "the connection could not be identified")
        }
    }

    /// Pins the process of connection `name`, or refuses the connection for good.
    private func pin(_ name: String) throws {
        let credentials = try bus.connectionCredentials(of: name)
        guard credentials.uid == CurrentProcess.userID else {
            standings[name] = .refused("programs of another user (uid \(credentials.uid)) are refused")
            configuration.log(
                "refused a Secret Service connection of pid \(credentials.pid): uid \(credentials.uid) is not the agent's user"
            )
            return
        }
        processOfPeer[name] = credentials.pid
        // The process's connections are counted again after the agent has looked at its sockets: a connection
        // that completed its handshake meanwhile is then counted too (its socket may have been among them).
        var counted = try connections(of: credentials.pid)
        var outcome: Result<ProcessPin, KeychainError>
        var rounds = 0
        repeat {
            outcome = configuration.identify(
                BusCaller(credentials: credentials, connectionsOfProcess: counted, busDaemon: busDaemon))
            let recount = try connections(of: credentials.pid)
            if recount == counted { break }
            counted = recount
            rounds += 1
            if rounds == 3 {
                outcome = .failure(
                    KeychainError(.missingEntitlement, "pid \(credentials.pid) keeps opening connections"))
            }
        } while rounds < 3
        switch outcome {
        case .success(let pin): standings[name] = .pinned(pin)
        case .failure(let error):
            let reason = error.detail ?? error.message
            standings[name] = .refused(reason)
            configuration.log("refused the Secret Service connection \(name): \(reason)")
        }
    }

    private func refuse(_ sender: String, _ reason: String) throws -> Never {
        standings[sender] = .refused(reason)
        configuration.log("refused the Secret Service connection \(sender): \(reason)")
        throw SecretServiceError.accessDenied(reason)
    }

    /// How many connections on the bus belong to process `pid` (by what the daemon recorded for each).
    private func connections(of pid: Int32) throws -> Int {
        for name in try bus.names() where name.hasPrefix(":") && processOfPeer[name] == nil {
            // A connection that left between the listing and the question has no process to count.
            do {
                processOfPeer[name] = try bus.processID(of: name)
            } catch {
                continue
            }
        }
        return processOfPeer.values.count { $0 == pid }
    }

    /// A connection joined the bus. Under isolation its process is pinned now — before it can run another
    /// program and hand the connection on (the exec race) — and connections of the same process that were
    /// let in are checked again at their next call, with one more connection to account for.
    func peerArrived(_ name: String) {
        guard configuration.policy == .isolated, name != bus.uniqueName else { return }
        do {
            try pin(name)
        } catch {
            return  // Gone already: nothing to pin.
        }
        guard let pid = processOfPeer[name] else { return }
        for (other, standing) in standings where other != name && processOfPeer[other] == pid {
            if case .refused = standing { continue }
            standings[other] = nil
        }
    }

    func peerLeft(_ name: String) {
        peers[name] = nil
        offers[name] = nil
        allowedOnce[name] = nil
        standings[name] = nil
        processOfPeer[name] = nil
    }
}
