import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Lock state across processes, the idle timeout, waiting for protected data, an agent killed and
/// restarted, the same results with and without the agent, and 50 clients at once.
@Suite(.serialized, .dedicatedThreads) struct AgentLifecycleTests {
    @Test func lockFollowsTheAccessibilityRules() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        #expect(
            try sandbox.client("a", "get", "s", "k")
                == "error -25308 the agent has not been unlocked since it started (application registrations are sealed under the passphrase)\n"
        )
        try sandbox.unlock()
        try sandbox.registerClients()
        #expect(try sandbox.client("a", "set", "s", "ak", "when-unlocked") == "ok\n")
        #expect(try sandbox.client("a", "set-ck", "s", "ck", "after-first-unlock") == "ok\n")
        #expect(try sandbox.cli("lock-keychain").status == 0)
        #expect(
            try sandbox.client("a", "status") == "locked registered latchkey-test-client-a latchkey-test-client-a\n")
        #expect(
            try sandbox.client("a", "get", "s", "ak")
                == "error -25308 items of accessibility ak are unavailable while the keychain is locked\n")
        #expect(try sandbox.client("a", "get", "s", "ck") == "after-first-unlock\n")
        try sandbox.unlock()
        #expect(try sandbox.client("a", "get", "s", "ak") == "when-unlocked\n")
    }

    @Test func theIdleTimeoutLocks() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        #expect(try sandbox.cli("set-keychain-settings", "-t", "1").status == 0)
        #expect(try sandbox.client("a", "status").hasPrefix("unlocked"))
        // The agent checks once a second: it locks one to two seconds after the last request.
        try waitUntil("the idle lock", seconds: 10) { sandbox.agentLog.contains("locked (idle for 1 s)") }
        #expect(try sandbox.client("a", "status").hasPrefix("locked"))
    }

    @Test func aClientCanWaitForProtectedData() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        let log = sandbox.directory.file("waiting.log")
        let waiting = try SpawnedProcess(
            HelperProcess.product("latchkey-test-client-a"), ["wait"], environment: sandbox.environment,
            log: log)
        try waitUntil("the client to start waiting") { sandbox.file(log) == "waiting\n" }
        // It has asked and is still waiting: the keychain has not been unlocked since the agent started.
        #expect(waiting.isRunning)
        try sandbox.unlock()
        try waitUntil("the client to see the unlock") { !waiting.isRunning }
        #expect(sandbox.file(log) == "waiting\navailable\n")
    }

    @Test func waitingForProtectedDataGivesUpAfterItsTimeout() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        #expect(try sandbox.client("a", "wait", "1") == "waiting\nfailed -25308\n")
    }

    @Test func aKilledAgentKeepsNoKeyAndClientsFallBack() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        try sandbox.registerClients()
        #expect(try sandbox.client("a", "set", "s", "k", "v") == "ok\n")
        sandbox.stop(signal: SIGKILL)
        // No agent: a client without a passphrase falls back to the keychain itself and cannot unlock it.
        #expect(
            try sandbox.client("a", "get", "s", "k").hasPrefix("error -25308 no terminal to ask for the passphrase"))
        // With the passphrase, the fallback gives the same answer the agent gave.
        #expect(try sandbox.client("a", "get", "s", "k", environment: sandbox.withPassphrase) == "v\n")
        // A new agent starts locked: the old one's keys did not survive it.
        try sandbox.start()
        let status = try sandbox.client("a", "status")
        #expect(status == "locked (not unlocked since opened) unknown until the first unlock - \n")
        try sandbox.unlock()
        #expect(try sandbox.client("a", "get", "s", "k") == "v\n")
    }

    @Test func sameResultsAndStatusesWithAndWithoutTheAgent() throws {
        let sandbox = try AgentSandbox()
        let script: [[String]] = [
            ["set", "s", "k", "v1"], ["get", "s", "k"], ["set", "s", "k", "v2"], ["get", "s", "k"], ["keys", "s"],
            ["remove", "s", "k"], ["remove", "s", "k"], ["get", "s", "k"], ["shared-get", "s", "k", "not.mine"],
        ]
        func run() throws -> [String] {
            try script.map {
                try HelperProcess.run(
                    HelperProcess.product("latchkey-test-client-a"), $0, environment: sandbox.withPassphrase
                ).stdout
            }
        }
        let embedded = try run()
        try sandbox.start()
        try sandbox.unlock()
        try sandbox.registerClients()
        #expect(
            try sandbox.client("a", "status") == "unlocked registered latchkey-test-client-a latchkey-test-client-a\n",
            "the second run goes through the agent")
        let agent = try run()
        #expect(agent == embedded)
        #expect(
            embedded == [
                "ok\n", "v1\n", "ok\n", "v2\n", "k\n", "removed\n", "absent\n", "<nil>\n",
                "error -34018 caller latchkey-test-client-a is not entitled to access group not.mine\n",
            ])
    }

    @Test func fiftyClientsAtOnce() async throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        try sandbox.registerClients()
        let outputs = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for index in 0..<50 {
                group.addTask {
                    let name = index % 2 == 0 ? "a" : "b"
                    _ = try sandbox.client(name, "set", "many", "key-\(index)", "value-\(index)")
                    return (index, try sandbox.client(name, "get", "many", "key-\(index)"))
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        for index in 0..<50 { #expect(outputs[index] == "value-\(index)\n") }
        #expect(try sandbox.client("a", "keys", "many").split(separator: ",").count == 25)
    }
}
