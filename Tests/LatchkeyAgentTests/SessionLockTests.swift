import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// The agent locks when the user's login session locks: logind's Lock signal on the session, or its
/// LockedHint turning true. A private bus stands in for the system bus, and fake-logind for logind (session
/// "c1" is the agent's user's, "c2" another user's).
@Suite(.serialized, .dedicatedThreads) struct SessionLockTests {
    func startedAgent(_ arguments: [String] = []) throws -> (AgentSandbox, FakeLogind) {
        let sandbox = try AgentSandbox()
        let logind = try FakeLogind(in: sandbox.directory)
        sandbox.agentEnvironment["DBUS_SYSTEM_BUS_ADDRESS"] = logind.address
        try sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose"] + arguments)
        try sandbox.unlock()
        try FakeLogind.wait("the agent's inhibitor", until: { try logind.inhibitors() == ["sleep latchkeyd delay"] })
        return (sandbox, logind)
    }

    /// A resume signal, after which the agent takes another inhibitor: once it has, every signal sent before
    /// it has been handled.
    func handled(_ logind: FakeLogind, inhibitors: Int = 2) throws {
        try logind.prepareForSleep(false)
        try FakeLogind.wait("the agent handled the signals", until: { try logind.inhibitors().count == inhibitors })
    }

    @Test func theSessionsLockSignalLocksTheKeychain() throws {
        let (sandbox, logind) = try startedAgent()
        #expect(sandbox.agentLog.contains("latchkeyd: locking when the session locks (1 session(s) of this user)\n"))
        #expect(try sandbox.client("a", "status").hasPrefix("unlocked"))
        try logind.lockSession("c1")
        try FakeLogind.wait(
            "the lock", until: { sandbox.agentLog.contains("latchkeyd: locked (the session locked (c1))\n") })
        #expect(try sandbox.client("a", "status").hasPrefix("locked"))
        // Unlocked again (the screen locker's PAM stack does it through pam_latchkey: PAMModuleTests).
        try sandbox.unlock()
        #expect(try sandbox.client("a", "status").hasPrefix("unlocked"))
    }

    @Test func theLockedHintLocksTheKeychain() throws {
        let (sandbox, logind) = try startedAgent()
        try logind.setLockedHint("c1", false)
        try handled(logind)
        #expect(try sandbox.client("a", "status").hasPrefix("unlocked"), "an unlocked hint changes nothing")
        try logind.setLockedHint("c1", true)
        try FakeLogind.wait(
            "the lock", until: { sandbox.agentLog.contains("latchkeyd: locked (the session's screen locked (c1))\n") })
        #expect(try sandbox.client("a", "status").hasPrefix("locked"))
    }

    @Test func anotherUsersSessionAndAnotherPeerAreIgnored() throws {
        let (sandbox, logind) = try startedAgent()
        try logind.lockSession("c2")
        try logind.setLockedHint("c2", true)
        try logind.spoofLockSession("c1")
        try handled(logind)
        #expect(try sandbox.client("a", "status").hasPrefix("unlocked"))
        #expect(!sandbox.agentLog.contains("locked ("), "\(sandbox.agentLog)")
    }

    @Test func theSwitchTurnsItOff() throws {
        let (sandbox, logind) = try startedAgent(["--no-lock-on-session-lock"])
        try logind.lockSession("c1")
        try logind.setLockedHint("c1", true)
        try handled(logind)
        #expect(try sandbox.client("a", "status").hasPrefix("unlocked"))
        #expect(!sandbox.agentLog.contains("locked ("))
        #expect(!sandbox.agentLog.contains("locking when the session locks"))
    }
}
