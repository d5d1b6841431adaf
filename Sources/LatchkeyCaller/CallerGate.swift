package import LatchkeyPOSIX

/// The one gate every front end passes a caller through — the agent's socket, the SSH agent, the Secret
/// Service and the secret portal (the credential helpers are clients of the agent's socket) — so that a new
/// front end cannot forget a step (docs/LATCHKEY-SECURITY.md, "Who is calling: one gate").
///
/// The gate pins the calling process (its pidfd), and attests who it is, strongest first: the Flatpak sandbox
/// it runs in, the LSM label that confines it, the executable of an unconfined process — or nobody
/// (`Attestation.unidentified`, with the reason). It also proves that a connection is the program's own: a
/// stream whose other end the pinned process holds as a close-on-exec descriptor (`holdsConnection`), a bus
/// connection whose socket is connected to one the bus daemon itself holds (`pin(busPeer:…)`). What an
/// attested caller may do is the agent's policy, decided in one place (`CallerPolicy`).
package enum CallerGate {
    /// The caller on a stream socket (the agent's socket, the SSH agent): the process that connected, pinned
    /// by `SO_PEERPIDFD` (or its pid and start time), and how it is known; nil when the kernel gives no
    /// credentials for the connection.
    package static func attest(streamPeer fd: FileDescriptor, frontEnd: FrontEnd, digests: DigestCache)
        -> AttestedCaller?
    {
        guard let peer = PeerIdentity.of(socket: fd, digests: digests) else { return nil }
        let attestation = attestation(of: peer, label: UnixSocket.peerSecurityLabel(fd))
        return AttestedCaller(peer: peer, attestation: attestation, frontEnd: frontEnd)
    }

    /// How `peer` is known: its sandbox, else the label that confines it, else — when the kernel's word on it
    /// holds (`PeerIdentity.untrusted`) and its executable can be read — its executable.
    static func attestation(of peer: PeerIdentity, label: [UInt8]?) -> Attestation {
        if let handle = peer.handle, let app = SandboxIdentity.flatpakApp(handle), !peer.hasEnded() {
            return .sandbox(appID: app)
        }
        if let confined = SandboxIdentity.confiningLabel(label) { return .confined(label: confined) }
        return executableAttestation(of: peer)
    }

    /// How an unconfined, unsandboxed `peer` is known: by its executable, when the kernel's word on it holds
    /// and the executable can be read.
    static func executableAttestation(of peer: PeerIdentity) -> Attestation {
        if let reason = peer.untrusted { return .unidentified(reason: reason) }
        guard let path = peer.executablePath, let digest = peer.executableDigest else {
            return .unidentified(
                reason: "the agent cannot tell which program pid \(peer.pid) runs (its executable cannot be read)")
        }
        return .executable(path: path, digest: digest)
    }

    /// Why a request that arrived on the connection whose agent end is `fd` may not be taken as the program
    /// `peer` runs now, or nil when it may: the process must hold the connection's other end, and as a
    /// close-on-exec descriptor — one the program it runs now opened (`exec` closes the others). A request
    /// written by a program before it exec'd a registered one fails this: its socket was not close-on-exec
    /// (then the process holds it without the flag) or it was (then only a child that forked before holds it).
    package static func holdsConnection(_ peer: PeerIdentity, ourEnd fd: FileDescriptor) -> String? {
        guard let handle = peer.handle, !handle.hasExited else {
            return "pid \(peer.pid) is no longer the process that connected"
        }
        guard let ours = SocketTable.inode(of: fd) else { return "the agent cannot read its end of the connection" }
        let theirs: UInt32?
        do {
            theirs = try SocketTable.peer(of: ours)
        } catch {
            return "the agent cannot read the other end of the connection from the kernel (\(error))"
        }
        guard let theirs else { return "the connection's other end is closed" }
        guard let sockets = handle.heldSockets else {
            return "the agent cannot list the descriptors of pid \(peer.pid)"
        }
        guard let held = sockets.first(where: { $0.inode == theirs }) else {
            return "pid \(peer.pid) does not hold this connection: another process (one that forked before it "
                + "ran this program) wrote on it"
        }
        guard held.closesOnExec else {
            return "pid \(peer.pid) holds this connection without close-on-exec: a program it ran before may "
                + "have opened it and written on it"
        }
        return nil
    }

    /// Pins the process of a bus connection when the connection joins the bus (`pid`, `uid` and `label` as
    /// the bus daemon recorded them; `connectionsOfProcess` how many of the bus's connections it attributes to
    /// that process now; `busDaemon` the daemon's own process). A sandboxed or confined process is attested at
    /// once; any other must hold, as close-on-exec sockets connected to sockets the bus daemon holds, at least
    /// as many connections as the daemon attributes to it — a connection made before an exec, kept by another
    /// process or across the exec, is not the program's own — or it is refused.
    package static func pin(
        busPeer pid: Int32, uid: UInt32, label: [UInt8]?, connectionsOfProcess: Int, busDaemon: ProcessHandle?,
        frontEnd: FrontEnd
    ) -> Result<BusPin, GateRefusal> {
        // No digest yet: every program that joins the bus is pinned, and only the ones that call need theirs.
        let peer = PeerIdentity.identify(pid: pid, uid: uid, digests: nil)
        guard let handle = peer.handle, !peer.hasEnded() else {
            return .failure(GateRefusal("pid \(pid) is no longer the process that connected"))
        }
        if let app = SandboxIdentity.flatpakApp(handle), !peer.hasEnded() {
            return .success(BusPin(peer: peer, platform: .sandbox(appID: app), frontEnd: frontEnd))
        }
        if let confined = SandboxIdentity.confiningLabel(label) {
            return .success(BusPin(peer: peer, platform: .confined(label: confined), frontEnd: frontEnd))
        }
        if let reason = peer.untrusted { return .failure(GateRefusal(reason)) }
        if let reason = stoppedOrTraced(handle) { return .failure(GateRefusal(reason)) }
        if let reason = ownsBusConnections(handle, attributed: connectionsOfProcess, busDaemon: busDaemon) {
            return .failure(GateRefusal(reason))
        }
        return .success(BusPin(peer: peer, platform: nil, frontEnd: frontEnd))
    }

    /// The bus daemon's own process: the one that holds the other end of this process's bus connection `fd`
    /// (the kernel's word, by socket inode) — the process the connection's credentials name (`dbus-daemon`),
    /// or one of its children (`dbus-broker`, which `dbus-broker-launch` starts on the socket it listens on).
    /// Nil when neither holds it: then no bus connection can be shown to be a program's own.
    package static func busDaemon(connectedThrough fd: FileDescriptor) -> ProcessHandle? {
        guard let ours = SocketTable.inode(of: fd), let credentials = UnixSocket.peerCredentials(fd) else {
            return nil
        }
        let theirs: UInt32?
        do {
            theirs = try SocketTable.peer(of: ours)
        } catch {
            return nil
        }
        guard let theirs, let listener = UnixSocket.peerProcess(fd) ?? ProcessHandle(pid: credentials.pid) else {
            return nil
        }
        for candidate in [listener] + listener.children.compactMap({ ProcessHandle(pid: $0) })
        where candidate.heldSockets?.contains(where: { $0.inode == theirs }) == true {
            return candidate
        }
        return nil
    }

    /// Why the process is not to be listened to now: stopped or traced (what it asks may be another
    /// program's doing); nil otherwise.
    static func stoppedOrTraced(_ handle: ProcessHandle) -> String? {
        guard let state = handle.state, state == "T" || state == "t" else { return nil }
        return "pid \(handle.pid) is stopped or traced: what it asks may be another program's doing"
    }

    /// Why the process does not own every bus connection the daemon attributes to it, or nil when it does. A
    /// socket is a connection to the bus when the socket it is connected to — the kernel's word, through
    /// `NETLINK_SOCK_DIAG` — is one the bus daemon's process holds. (Not its peer's *address*: that is a name
    /// anyone can bind, by renaming the bus's socket aside or in a mount namespace of their own.)
    static func ownsBusConnections(_ handle: ProcessHandle, attributed: Int, busDaemon: ProcessHandle?) -> String? {
        let pid = handle.pid
        guard let busDaemon, !busDaemon.hasExited else {
            return "the agent cannot tell which sockets are connections to this bus (its daemon's process is unknown)"
        }
        guard let daemonSockets = busDaemon.heldSockets else {
            return "the agent cannot list the sockets of the bus daemon (pid \(busDaemon.pid))"
        }
        let daemonEnds = Set(daemonSockets.map(\.inode))
        guard let sockets = handle.heldSockets else { return "the agent cannot list the sockets of pid \(pid)" }
        var own = 0
        for socket in sockets where socket.closesOnExec {
            // A socket that closed since the listing is no connection of the process.
            guard let peer = try? SocketTable.peer(of: socket.inode) else { continue }
            if daemonEnds.contains(peer) { own += 1 }
        }
        guard own >= 1, attributed <= own else {
            return
                "pid \(pid) has \(attributed) connection(s) on the bus but holds \(own) opened by the program it "
                + "runs now: a connection made before it ran that program (kept by another process, or across exec) is not that program's"
        }
        return nil
    }
}

/// Why the gate refuses a caller.
package struct GateRefusal: Error, Sendable, Equatable {
    /// What the log and the refusal say.
    package let reason: String

    /// A refusal.
    package init(_ reason: String) { self.reason = reason }
}

/// A bus connection's process as the gate pinned it when the connection joined the bus; who it is is
/// attested at its first call (`attest(digests:)`), as long as the pin holds (`invalidation()`).
package struct BusPin: Sendable {
    /// The process, pinned, with the program it ran at the pin (no digest yet).
    package let peer: PeerIdentity
    /// The sandbox or label that attests it, when one does.
    let platform: Attestation?
    let frontEnd: FrontEnd

    /// Why the connection may no longer act as the caller pinned — its process ended, runs another program
    /// than at the pin, or is stopped or traced — or nil while it may. One `poll` and one `stat`.
    package func invalidation() -> String? {
        if peer.hasEnded() { return "pid \(peer.pid) has ended" }
        if platform != nil { return nil }  // The sandbox or the label holds whatever the process runs.
        guard let handle = peer.handle, let now = handle.executableStatus, FileIdentity(now) == peer.executableFile
        else {
            return "pid \(peer.pid) runs another program than when it connected"
        }
        if let reason = CallerGate.stoppedOrTraced(handle) { return reason }
        return nil
    }

    /// Who the caller is, read now with its executable's digest: the very file pinned, or unidentified.
    package func attest(digests: DigestCache) -> AttestedCaller {
        if let platform { return AttestedCaller(peer: peer, attestation: platform, frontEnd: frontEnd) }
        if let reason = invalidation() {
            return AttestedCaller(peer: peer, attestation: .unidentified(reason: reason), frontEnd: frontEnd)
        }
        guard let handle = peer.handle else {
            return AttestedCaller(
                peer: peer,
                attestation: .unidentified(reason: "pid \(peer.pid) is no longer the process that connected"),
                frontEnd: frontEnd)
        }
        let program = PeerIdentity.identify(handle: handle, uid: peer.uid, digests: digests)
        guard program.executableFile == peer.executableFile else {
            return AttestedCaller(
                peer: peer,
                attestation: .unidentified(reason: "pid \(peer.pid) runs another program than when it connected"),
                frontEnd: frontEnd)
        }
        return AttestedCaller(
            peer: program, attestation: CallerGate.executableAttestation(of: program), frontEnd: frontEnd)
    }
}
