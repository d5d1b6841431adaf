import FoundationEssentials
import LatchkeyDBus
import LatchkeyPOSIX

/// Locks the keychain when one of the user's login sessions locks its screen: logind's `Lock` signal on the
/// session's object (`loginctl lock-session`, a lid or idle policy) and its `LockedHint` turning true (what
/// GNOME Shell, KDE and most screen lockers set). Beside lock-on-sleep, on the same system-bus connection.
///
/// Unlocking again needs no extra prompt: the screen locker's own PAM stack runs pam_latchkey's auth step,
/// which unlocks the running agent with the password typed to unlock the screen (docs/LOGIN.md).
///
/// On by default; `latchkeyd --no-lock-on-session-lock` (or `LATCHKEY_LOCK_ON_SESSION_LOCK=0`) turns it off.
/// A signal for another user's session is ignored: the sessions are logind's `ListSessions`, kept to this
/// user's (by uid), read again when a signal names a session not seen yet.
enum SessionLockWatcher {
    static let sessionInterface = "org.freedesktop.login1.Session"

    /// The object paths of this user's sessions.
    private final class Sessions {
        var paths: Set<String> = []
    }

    /// Watches on `bus` (dispatched by the caller's `run`).
    static func attach(to bus: Bus, state: AgentState, log: @escaping @Sendable (String) -> Void) throws(BusError) {
        let sessions = Sessions()
        let uid = CurrentProcess.effectiveUserID
        func refresh() {
            do {
                sessions.paths = try userSessions(bus, uid: uid)
            } catch {
                log("cannot list the login sessions: \(error)")
            }
        }
        func isOurs(_ path: String) -> Bool {
            if sessions.paths.contains(path) { return true }
            refresh()  // A session that began after the agent started.
            return sessions.paths.contains(path)
        }
        try bus.onSignal(sender: SleepWatcher.logind, interface: sessionInterface, member: "Lock") { message in
            guard isOurs(message.path) else { return }
            state.lock(reason: "the session locked (\(message.path.split(separator: "/").last ?? ""))")
        }
        try bus.onSignal(
            sender: SleepWatcher.logind, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"
        ) { message in
            guard message.path.hasPrefix(SleepWatcher.path + "/session/"), lockedHint(in: message) == true,
                isOurs(message.path)
            else { return }
            state.lock(reason: "the session's screen locked (\(message.path.split(separator: "/").last ?? ""))")
        }
        refresh()
        log("locking when the session locks (\(sessions.paths.count) session(s) of this user)")
    }

    /// `LockedHint` in a `PropertiesChanged(s interface, a{sv} changed, as invalidated)` of a session, or nil.
    static func lockedHint(in message: BusMessage) -> Bool? {
        do {
            guard try message.readString() == sessionInterface else { return nil }
            _ = try message.enter("a", "{sv}")
            while try message.enter("e", "sv") {
                let name = try message.readString()
                if name == "LockedHint", let (type, contents) = try message.peek(), type == "v", contents == "b" {
                    _ = try message.enter("v", "b")
                    return try message.readBool()
                }
                try message.skip()
                try message.exit()
            }
            return nil
        } catch {
            return nil  // Not the signal logind sends: nothing to act on.
        }
    }

    /// logind's `ListSessions` (`a(susso)`: id, uid, user, seat, path), kept to `uid`'s.
    static func userSessions(_ bus: Bus, uid: UInt32) throws(BusError) -> Set<String> {
        let reply = try bus.call(
            SleepWatcher.logind, path: SleepWatcher.path, interface: SleepWatcher.manager, member: "ListSessions",
            timeoutSeconds: 5)
        var paths: Set<String> = []
        _ = try reply.enter("a", "(susso)")
        while try reply.enter("r", "susso") {
            _ = try reply.readString()
            let owner = try reply.readUInt32()
            _ = try reply.readString()
            _ = try reply.readString()
            let path = try reply.readString("o")
            try reply.exit()
            if owner == uid { paths.insert(path) }
        }
        try reply.exit()
        return paths
    }
}
