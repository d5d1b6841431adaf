import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// `latchkeyd --program-identity platform` (issue 50): only what the platform attests tells programs apart.
/// A Flatpak app keeps its own items; every unconfined program is the user — on the Secret Service the items
/// every unconfined program shares, on the agent's socket nothing without the passphrase, registered or not.
@Suite(.serialized, .dedicatedThreads) struct PlatformProgramIdentityTests {
    typealias Desktop = SecretServiceTests.Desktop
    typealias Isolation = SecretServiceIsolationTests

    @Test func onlySandboxedProgramsHaveItemsOfTheirOwn() throws {
        let desktop = try Desktop(
            agentArguments: ["--secret-service-policy", "isolated", "--program-identity", "platform"],
            user: TestTools.nobody)
        try desktop.sandbox.unlock()
        let stored = try desktop.secretTool(
            "store", "--label=Mail", "service", "mail", "user", "alice", input: "s3cret")
        #expect(stored.status == 0, "\(stored.stderr)")
        // Another unconfined program — python3 — is the same user: it sees secret-tool's item.
        let seen = try desktop.python(
            "import secretstorage; print(len(list(secretstorage.search_items(secretstorage.dbus_init(), {'service': 'mail'}))))"
        )
        #expect(seen.stdout == "1\n", "\(seen.stderr)")
        #expect(desktop.sandbox.agentLog.contains(", an unconfined program, as the user (--program-identity platform)"))
        // A Flatpak app sees none of them, and its own item is its own.
        #expect(
            try Isolation.inFlatpak(desktop, app: "org.example.Notes", Isolation.countOwned, ["notes"]).stdout == "0\n")
        let mine = try Isolation.inFlatpak(desktop, app: "org.example.Notes", Isolation.storeOwned, ["notes"])
        #expect(mine.status == 0, "\(mine.stderr)")
        #expect(try desktop.python(Isolation.countOwned, "notes").stdout == "0\n")
        #expect(
            try Isolation.inFlatpak(desktop, app: "org.example.Notes", Isolation.countOwned, ["notes"]).stdout == "1\n")
    }

    @Test func aRegisteredUnconfinedProgramGetsNothingFromTheAgentsSocket() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose", "--program-identity", "platform"])
        try sandbox.unlock()
        try sandbox.registerClients()
        // The agent says it does not serve the registered client; the client then needs the passphrase, and
        // without one (none in its environment, no terminal) stores nothing.
        #expect(try sandbox.client("a", "status") == "unlocked unregistered - \n")
        let set = try HelperProcess.run(
            HelperProcess.product("latchkey-test-client-a"), ["set", "k", "v"], environment: sandbox.environment)
        #expect(set.status != 0, "\(set.stdout)")
        #expect(try sandbox.cli("find-generic-password", "-a", "k").status == 44)
    }

    /// Under the default, the same registered client is served: the option is what changed it.
    @Test func theDefaultServesTheRegisteredProgram() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        try sandbox.registerClients()
        #expect(
            try sandbox.client("a", "status")
                == "unlocked registered latchkey-test-client-a latchkey-test-client-a\n")
    }

    @Test func aWrongValueIsAUsageError() throws {
        let run = try HelperProcess.run(HelperProcess.product("latchkeyd"), ["--program-identity", "paths"])
        #expect(run.status == 64)
        #expect(run.stderr == "latchkeyd: --program-identity is executable or platform, not \"paths\"\n")
    }
}
