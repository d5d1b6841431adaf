import Foundation
import LatchkeyEngine
import LatchkeyPOSIX
import LatchkeySecretService

/// Who a Secret Service connection acts as under the isolated policy: its process pinned when the connection
/// joins the bus (the process the bus daemon recorded), who it is decided at its first call (docs/LATCHKEY-SECURITY.md, "The Secret
/// Service"). In order of what is attested most strongly:
///
/// 1. **A Flatpak app**: a process in a mount namespace of its own whose root holds `/.flatpak-info` (read
///    through its `/proc/<pid>` directory, as xdg-desktop-portal reads it) acts as its app ID — access group
///    `flatpak:<app id>`. The sandbox fixes it; running another program inside it changes nothing.
/// 2. **A confining LSM label** the daemon recorded at connection (an AppArmor profile in enforce mode, as
///    Snap apps have; an SELinux domain other than `unconfined_t`): access group `apparmor:<profile>` or
///    `selinux:<type>`.
/// 3. **A registered program** (path and digest, as on the agent's socket), else **its executable** (access
///    group `secret-service:<path>`) — only when the connection is the program's own: the bus gives no
///    per-message credentials, and a process may run another program after connecting (the exec race), so
///    every bus connection the daemon attributes to the process must be a socket the process holds and
///    that closes at `exec` — opened by the program it runs now. A connection made before an `exec` (kept by
///    a child, or by the process itself with close-on-exec cleared) fails that count.
///
/// Refused: another user; a process in another user or pid namespace that is not a Flatpak app; one that
/// runs a deleted executable; one that is stopped or traced; one whose sockets cannot be read.
enum BusCallerPolicy {
    /// Fixes the connection's process now (when it joins the bus): what it runs and that the connection is
    /// its own — or refuses it. The pin says who it acts as at its first call.
    static func pin(_ caller: BusCaller, state: AgentState) -> Result<ProcessPin, KeychainError> {
        let pid = caller.credentials.pid
        // No digest yet: every program that joins the bus is pinned, and only the ones that call the Secret
        // Service need theirs (to be compared with the registrations).
        let peer = PeerIdentity.identify(pid: pid, uid: caller.credentials.uid, digests: nil)
        guard let handle = peer.handle, !peer.hasEnded() else {
            return refusal("pid \(pid) is no longer the process that connected")
        }
        let ended: @Sendable () -> String? = { peer.hasEnded() ? "pid \(pid) has ended" : nil }
        if let app = flatpakApp(handle) {
            let pinned = PinnedCaller(
                identity: CallerIdentity(applicationIdentifier: app, accessGroups: ["flatpak:" + app]),
                summary: "the Flatpak app \(app)", invalidation: ended)
            return .success(ProcessPin { .success(pinned) })
        }
        if let group = confiningLabel(caller.credentials.securityLabel) {
            let pinned = PinnedCaller(
                identity: CallerIdentity(applicationIdentifier: group, accessGroups: [group]),
                summary: "the confined program \(group)", invalidation: ended)
            return .success(ProcessPin { .success(pinned) })
        }
        if let reason = peer.untrusted { return refusal(reason) }
        if let state = handle.state, state == "T" || state == "t" {
            return refusal("pid \(pid) is stopped or traced: what it asks may be another program's doing")
        }
        if let reason = ownConnections(handle, caller: caller) { return refusal(reason) }
        let file = peer.executableFile
        let changed: @Sendable () -> String? = {
            if let reason = ended() { return reason }
            guard let now = handle.executableStatus, FileIdentity(now) == file else {
                return "pid \(pid) runs another program than when it connected"
            }
            if let state = handle.state, state == "T" || state == "t" { return "pid \(pid) is stopped or traced" }
            return nil
        }
        return .success(
            ProcessPin {
                if let reason = changed() { return refusal(reason) }
                guard let registrations = state.currentRegistrations else {
                    return .failure(
                        KeychainError(
                            .interactionNotAllowed,
                            "the agent has not been unlocked since it started (registrations are sealed under the passphrase)"
                        ))
                }
                // The program read again, with its digest: the very file pinned (or the pin no longer holds).
                let program = PeerIdentity.identify(handle: handle, uid: caller.credentials.uid, digests: state.digests)
                guard program.executableFile == file else {
                    return refusal("pid \(pid) runs another program than when it connected")
                }
                switch CallerPolicy.standing(of: program, registrations: registrations) {
                case .registered(let registration):
                    return .success(
                        PinnedCaller(
                            identity: registration.caller,
                            summary: "the registered program \(registration.executablePath)",
                            invalidation: changed))
                case .unregistered(let path):
                    return .success(
                        PinnedCaller(
                            identity: CallerIdentity(
                                applicationIdentifier: path, accessGroups: ["secret-service:" + path]),
                            summary: path, invalidation: changed))
                case .unidentified(let reason): return refusal(reason)
                case .refused(let error): return .failure(error)
                }
            })
    }

    private static func refusal<T>(_ reason: String) -> Result<T, KeychainError> {
        .failure(KeychainError(.missingEntitlement, reason))
    }

    /// Why the process does not own every bus connection the daemon attributes to it, or nil when it does.
    static func ownConnections(_ handle: ProcessHandle, caller: BusCaller) -> String? {
        let pid = handle.pid
        guard let address = caller.busAddress else {
            return "the agent cannot tell which sockets are connections to this bus (its address is unknown)"
        }
        guard let sockets = handle.heldSockets else { return "the agent cannot list the sockets of pid \(pid)" }
        let table: SocketTable
        do {
            table = try SocketTable.read()
        } catch {
            return "the agent cannot read the system's socket table (\(error))"
        }
        let connected = sockets.filter { table.peerAddress(of: $0.inode) == address }
        let own = connected.filter(\.closesOnExec).count
        guard own >= 1, caller.connectionsOfProcess <= own else {
            return
                "pid \(pid) has \(caller.connectionsOfProcess) connection(s) on the bus but holds \(own) opened by the program it "
                + "runs now: a connection made before it ran that program (kept by another process, or across exec) is not that program's"
        }
        return nil
    }

    /// The app ID of a Flatpak sandbox the process runs in: its `/.flatpak-info` (`[Application]` or
    /// `[Runtime]` `name=`), read through its own root, when it is in a mount namespace of its own; nil
    /// otherwise, or when the ID is not a valid one.
    static func flatpakApp(_ handle: ProcessHandle) -> String? {
        guard let theirs = handle.namespace(.mount), let mine = Namespace.current(.mount), theirs != mine,
            let bytes = handle.readFile("root/.flatpak-info", limit: 64 << 10), !handle.hasExited
        else { return nil }
        var group = ""
        var names: [String: String] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("[") && line.hasSuffix("]") {
                group = String(line.dropFirst().dropLast())
            } else if line.hasPrefix("name=") {
                names[group] = String(line.dropFirst(5))
            }
        }
        guard let name = names["Runtime"] ?? names["Application"], isValidAppID(name) else { return nil }
        return name
    }

    /// Flatpak's rule for an app ID: three or more elements joined by dots, each of ASCII letters, digits, `_`
    /// (and `-` in the last one), none starting with a digit; at most 255 bytes.
    static func isValidAppID(_ id: String) -> Bool {
        let elements = id.split(separator: ".", omittingEmptySubsequences: false)
        guard id.utf8.count <= 255, elements.count >= 3 else { return false }
        for (index, element) in elements.enumerated() {
            guard let first = element.unicodeScalars.first, !("0"..."9").contains(first) else { return false }
            let last = index == elements.count - 1
            for scalar in element.unicodeScalars {
                let allowed =
                    ("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar)
                    || scalar == "_" || (last && scalar == "-")
                guard allowed else { return false }
            }
        }
        return true
    }

    /// The access group of a label that confines the process: an AppArmor profile in enforce mode
    /// (`name (enforce)`), an SELinux context whose type is not unconfined; nil for none, `unconfined`, or a
    /// profile in complain mode (which confines nothing).
    static func confiningLabel(_ label: [UInt8]?) -> String? {
        guard let label, !label.isEmpty, let text = String(validating: label, as: UTF8.self) else { return nil }
        if text.contains(":") {
            let fields = text.split(separator: ":")
            guard fields.count >= 3, !fields[2].contains("unconfined") else { return nil }
            return "selinux:" + fields[2]
        }
        guard text.hasSuffix(" (enforce)") else { return nil }
        let profile = String(text.dropLast(" (enforce)".count))
        guard !profile.isEmpty, profile != "unconfined" else { return nil }
        return "apparmor:" + profile
    }
}
