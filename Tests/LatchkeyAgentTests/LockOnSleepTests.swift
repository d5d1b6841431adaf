import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// `set-keychain-settings -l`: the agent locks before the system sleeps. A private bus stands in for the
/// system bus, and fake-logind for logind (its Inhibit method and PrepareForSleep signal).
@Suite(.serialized, .dedicatedThreads) struct LockOnSleepTests {
    /// An agent on a private system bus with fake-logind, unlocked, holding its delay inhibitor.
    func startedAgent() throws -> (AgentSandbox, FakeLogind) {
        let sandbox = try AgentSandbox()
        let logind = try FakeLogind(in: sandbox.directory)
        sandbox.agentEnvironment["DBUS_SYSTEM_BUS_ADDRESS"] = logind.address
        try sandbox.start()
        try sandbox.unlock()
        try FakeLogind.wait("the agent's inhibitor", until: { try logind.inhibitors() == ["sleep latchkeyd delay"] })
        return (sandbox, logind)
    }

    @Test func theAgentLocksBeforeTheSystemSleepsAndHoldsTheSleepUntilThen() throws {
        let (sandbox, logind) = try startedAgent()
        #expect(try sandbox.cli("set-keychain-settings", "-l").status == 0)
        #expect(
            try sandbox.cli("show-keychain-info").stderr
                == "Keychain \"\(sandbox.keychainPath)\" lock-on-sleep no-timeout\n")
        #expect(try sandbox.client("a", "status").hasPrefix("unlocked"))

        try logind.prepareForSleep(true)
        // The agent locks, then logs: wait for the log line, then look.
        try FakeLogind.wait("the lock", until: { sandbox.agentLog.contains("locked (the system is going to sleep)") })
        #expect(try sandbox.client("a", "status").hasPrefix("locked"))
        // The inhibitor is released once the keys are gone, which lets logind suspend.
        try FakeLogind.wait("the inhibitor's release", until: { try logind.inhibitors().isEmpty })

        // After the resume the agent takes a new inhibitor for the next sleep; the keychain stays locked.
        try logind.prepareForSleep(false)
        try FakeLogind.wait("a new inhibitor", until: { try logind.inhibitors() == ["sleep latchkeyd delay"] })
        #expect(try sandbox.client("a", "status").hasPrefix("locked"))
        #expect(logind.log.components(separatedBy: "inhibit sleep latchkeyd delay\n").count - 1 == 2)
    }

    @Test func withoutTheSettingASleepDoesNotLock() throws {
        let (sandbox, logind) = try startedAgent()
        #expect(try sandbox.cli("set-keychain-settings").status == 0)  // Neither -l nor -t.
        try logind.prepareForSleep(true)
        // The agent saw the signal (it released its inhibitor) and kept its keys.
        try FakeLogind.wait("the inhibitor's release", until: { try logind.inhibitors().isEmpty })
        #expect(try sandbox.client("a", "status").hasPrefix("unlocked"))
        #expect(!sandbox.agentLog.contains("locked ("))
    }

    @Test func aSleepSignalFromAnotherPeerIsIgnored() throws {
        let (sandbox, logind) = try startedAgent()
        #expect(try sandbox.cli("set-keychain-settings", "-l").status == 0)
        try logind.spoofPrepareForSleep()
        // A later signal from logind itself (a resume, which makes the agent take another inhibitor) marks
        // the moment the agent has handled everything sent before it.
        try logind.prepareForSleep(false)
        try FakeLogind.wait("the resume", until: { try logind.inhibitors().count == 2 })
        #expect(try sandbox.client("a", "status").hasPrefix("unlocked"))
        #expect(!sandbox.agentLog.contains("locked ("), "the agent did not act on the spoofed signal")
        #expect(!sandbox.agentLog.contains("ready to sleep"))
        // The real one, from logind's name, still locks.
        try logind.prepareForSleep(true)
        try FakeLogind.wait("the lock", until: { try sandbox.client("a", "status").hasPrefix("locked") })
    }

    @Test func withoutASystemBusTheAgentServesAndSaysWhy() throws {
        let sandbox = try AgentSandbox()  // Its system bus address leads nowhere.
        try sandbox.start()
        try sandbox.unlock()
        #expect(try sandbox.client("a", "status").hasPrefix("unlocked"))
        try FakeLogind.wait(
            "the agent's log line",
            until: {
                sandbox.agentLog.contains(
                    "latchkeyd: lock on sleep is unavailable: connecting to the system bus: No such file or directory\n"
                )
            })
    }
}
