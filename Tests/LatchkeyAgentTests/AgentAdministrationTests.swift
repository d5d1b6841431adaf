import Foundation
import LatchkeyTestSupport
import Testing

/// Who else the agent serves, and how it is set up, is not every program's business (issue 50, point 6): the
/// list of registered programs and the keychain's settings go only to registered programs; anyone else reads
/// them with the passphrase, from the keychain itself.
@Suite(.serialized, .dedicatedThreads) struct AgentAdministrationTests {
    /// The operation codes of `listRegistrations` and `settings` (LatchkeyProtocol's `AgentOperation`).
    static let listRegistrations = 12, settings = 14

    @Test func anUnregisteredProgramListsNoRegistrationAndNoSetting() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        try sandbox.registerClients()
        let asked = try HelperProcess.run(
            "/usr/bin/python3",
            [
                AgentHardeningTests.tools + "/agent-ask.py", sandbox.socketPath, String(Self.listRegistrations),
                String(Self.settings),
            ],
            environment: sandbox.environment)
        // errSecMissingEntitlement, both.
        #expect(asked.stdout == "12 -34018\n14 -34018\n", "\(asked.stderr)")
        let python = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path
        #expect(
            sandbox.agentLog.contains(
                "refused the list of registered programs of pid "), "\(sandbox.agentLog)")
        #expect(sandbox.agentLog.contains(": \(python) is not registered with the agent"))
        #expect(sandbox.agentLog.contains("refused the keychain's settings of pid "))

        // `latchkey list-applications`, unregistered, reads them from the keychain with the passphrase — and
        // without one (no terminal, no passphrase given) says it has nothing to unlock with.
        let listed = try HelperProcess.run(
            HelperProcess.product("latchkey"), ["list-applications"], environment: sandbox.withPassphrase)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(
            listed.stdout.split(separator: "\n").map { $0.split(separator: " ").first ?? "" } == [
                "latchkey-test-client-a", "latchkey-test-client-b",
            ])
        let unasked = try HelperProcess.run(
            HelperProcess.product("latchkey"), ["list-applications"], environment: sandbox.environment)
        #expect(unasked.status == 36)
        #expect(unasked.stdout == "")
        #expect(
            unasked.stderr.hasPrefix(
                "latchkey: list-applications: User interaction is not allowed. (no terminal to prompt on"),
            "\(unasked.stderr)")
    }

    @Test func aRegisteredProgramListsThem() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        let latchkey = URL(fileURLWithPath: HelperProcess.product("latchkey")).resolvingSymlinksInPath().path
        #expect(try sandbox.cli("register-application", "--wildcard", latchkey).status == 0)
        let listing = try HelperProcess.run(
            HelperProcess.product("latchkey"), ["list-applications"], environment: sandbox.environment)
        #expect(listing.stdout.hasPrefix("latchkey [\"latchkey\", \"*\"] \(latchkey) ("), "\(listing.stderr)")
    }
}
