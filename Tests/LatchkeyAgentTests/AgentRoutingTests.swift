import Foundation
import LatchkeyTestSupport
import Testing

/// Where a program's requests go is decided once per connection to the agent (docs: AgentRouting): a
/// program the agent does not serve is refused once and then opens the keychain itself without asking
/// again, until the registrations change — the agent then closes its connection, and its next call asks
/// again and is served.
@Suite(.serialized, .dedicatedThreads) struct AgentRoutingTests {
    func refusals(_ sandbox: AgentSandbox) -> Int {
        sandbox.agentLog.components(separatedBy: "\n").filter { $0.contains("refused an item request of pid ") }.count
    }

    @Test func anUnregisteredProgramIsRefusedOnceThenOpensTheKeychainItself() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        // Twenty stores and twenty reads in one process: the agent refuses the first request only.
        #expect(try sandbox.client("a", "set-many", "s", "20", environment: sandbox.withPassphrase) == "ok\n")
        #expect(refusals(sandbox) == 1, "\(sandbox.agentLog)")
        // Each process decides on its own connection: a second run is refused once more.
        #expect(try sandbox.client("a", "set-many", "s", "3", environment: sandbox.withPassphrase) == "ok\n")
        #expect(refusals(sandbox) == 2)
        // Without a passphrase the refusal is still the agent's own words, and the embedded failure's.
        let a = AgentSandbox.clientPath("a")
        #expect(
            try sandbox.client("a", "set-many", "s", "2")
                == "error -34018 \(a) is not registered with the agent; register it with `latchkey register-application \(a)`, "
                + "or let it open the keychain with the passphrase; without the agent: no terminal to ask for the passphrase; "
                + "set LATCHKEY_PASSPHRASE or pass a file descriptor\n")
    }

    @Test func aRegistrationMadeMeanwhileIsNoticedOnTheNextCall() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        let log = sandbox.directory.file("routing.log")
        let trigger = sandbox.directory.file("go")
        // Unregistered: the first store goes to the keychain opened in the process, in its own group.
        let client = try SpawnedProcess(
            HelperProcess.product("latchkey-test-client-a"), ["set-wait-set", "s", "before", "after", "v", trigger],
            environment: sandbox.withPassphrase, log: log)
        try waitUntil("the first store") { sandbox.file(log) == "first\n" }
        #expect(refusals(sandbox) == 1)
        // Registered now, through the agent, under another group: the agent closes the client's connection.
        try sandbox.register(AgentSandbox.clientPath("a"), appID: "com.example.a", groups: ["shared"])
        #expect(
            sandbox.agentLog.contains(
                "registrations changed: closed 1 connection(s) of programs it had refused, which ask again\n"))
        #expect(FileManager.default.createFile(atPath: trigger, contents: nil))
        try waitUntil("the second store") { !client.isRunning }
        #expect(sandbox.file(log) == "first\nsecond\n")
        #expect(refusals(sandbox) == 1, "the second store was served, not refused")
        // The second store ran as the registration (group "shared"), the first as the unregistered program.
        try sandbox.register(AgentSandbox.clientPath("b"), appID: "com.example.b", groups: ["shared"])
        #expect(try sandbox.client("b", "get", "s", "after") == "v\n")
        #expect(try sandbox.client("b", "get", "s", "before") == "<nil>\n")
    }
}
