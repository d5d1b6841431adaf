import FoundationEssentials
import LatchkeyDBus
import LatchkeyPOSIX

/// Locks the keychain before the system sleeps when its settings ask for it (`set-keychain-settings -l`).
///
/// Watches logind's `PrepareForSleep` signal on the system bus and holds a "delay" inhibitor lock, as
/// screen lockers do: logind waits (up to its `InhibitDelayMaxSec`) for the agent to lock and release the
/// inhibitor before it suspends, so no key is in memory while the machine sleeps. After the resume
/// (`PrepareForSleep(false)`) the inhibitor is taken again. Without a system bus or logind the agent runs
/// on, without this lock, and says so in its log.
enum SleepWatcher {
    static let logind = "org.freedesktop.login1"
    static let path = "/org/freedesktop/login1"
    static let manager = "org.freedesktop.login1.Manager"

    /// Starts watching on a thread of its own (and for the session's lock too, `SessionLockWatcher`, when
    /// `lockOnSessionLock`).
    static func start(state: AgentState, lockOnSessionLock: Bool, log: @escaping @Sendable (String) -> Void) {
        DetachedThread.start(name: "sleep watcher") {
            do {
                try watch(state: state, lockOnSessionLock: lockOnSessionLock, log: log)
            } catch {
                log("lock on sleep is unavailable: \(error)")
            }
        }
    }

    private static func watch(state: AgentState, lockOnSessionLock: Bool, log: @escaping @Sendable (String) -> Void)
        throws(BusError) -> Never
    {
        let bus = try Bus(.system)
        var inhibitor: FileDescriptor?
        func takeInhibitor() {
            do {
                inhibitor = try bus.callReturningFileDescriptor(
                    destination: logind, path: path, interface: manager, member: "Inhibit",
                    arguments: ["sleep", "latchkeyd", "Lock the keychain before the system sleeps", "delay"])
            } catch {
                // Still locks on the signal; the machine may only reach sleep before the lock does.
                log("no sleep inhibitor: \(error)")
            }
        }
        try bus.onBooleanSignal(sender: logind, path: path, interface: manager, member: "PrepareForSleep") { sleeping in
            if sleeping {
                state.lockBeforeSleep()
                inhibitor?.close()
                inhibitor = nil
                log("ready to sleep")
            } else {
                takeInhibitor()
                log("resumed")
            }
        }
        takeInhibitor()
        log("watching for sleep on the system bus")
        if lockOnSessionLock {
            do {
                try SessionLockWatcher.attach(to: bus, state: state, log: log)
            } catch {
                log("lock on session lock is unavailable: \(error)")
            }
        }
        try bus.run()
    }
}
