import Foundation
import LatchkeyTestSupport
import Testing

/// Secret Service items and the keychain's sync (docs/SYNC.md, "The agent"): two devices of one vault on a
/// PostgreSQL server of the test's own, each with its agent providing the Secret Service on a private bus.
/// Under `--secret-service-sync` an item `secret-tool` stores on one is found by `secret-tool` on the other,
/// pushed by the agent at once (no command runs a round); without it, an item stays where it was stored. The
/// other device LISTENs before its first round: before, a change pushed while that round ran waited for the
/// minute's round (this test timed out 3 times in 4).
@Suite(.serialized, .dedicatedThreads) struct SecretServiceSyncTests {
    @Test func secretToolItemsReachTheOtherDeviceOnlyUnderTheOption() throws {
        let server = try SyncTestServer(.direct)
        let laptop = try SecretServiceTests.Desktop(startingTheAgent: false)
        let desktop = try SecretServiceTests.Desktop(startingTheAgent: false)
        let setup = try laptop.sandbox.cli("sync", "setup", "--server", server.conninfo, "--name", "laptop")
        #expect(setup.status == 0, "\(setup.stderr)")
        let join = try desktop.sandbox.cli(
            "sync", "join", "--server", server.conninfo, "--name", "desktop", "--wait", "0")
        let code = try #require(join.stdout.firstMatch(of: /approve (\d{3}-\d{3})/)?.1).description
        #expect(try laptop.sandbox.cli("sync", "approve", code).status == 0)
        let joined = try desktop.sandbox.cli("sync", "now")
        #expect(joined.status == 0, "\(joined.stderr)")

        let latchkeyd = HelperProcess.product("latchkeyd")
        try laptop.sandbox.start(latchkeyd, ["--verbose", "--secret-service", "--secret-service-sync"])
        try desktop.sandbox.start(latchkeyd, ["--verbose", "--secret-service"])
        try laptop.sandbox.unlock()
        try desktop.sandbox.unlock()
        #expect(
            laptop.sandbox.agentLog.contains(
                "Secret Service items: every program of the user sees them all; new ones sync to the vault's other devices"
            ))

        let stored = try laptop.secretTool("store", "--label=Home Wi-Fi", "network", "home", input: "pa55w0rd")
        #expect(stored.status == 0, "\(stored.stderr)")
        // The desktop's agent pulls when the server's notification rings: nothing here runs a round.
        try waitUntil("the item on the other device", seconds: 20) {
            try desktop.secretTool("lookup", "network", "home").stdout == "pa55w0rd"
        }
        let found = try desktop.secretTool("search", "network", "home")
        #expect(found.stdout.contains("label = Home Wi-Fi\n"))
        // The other device changes it through its own Secret Service (its items show synchronizable ones too),
        // and the change comes back.
        let changed = try desktop.secretTool("store", "--label=Home Wi-Fi", "network", "home", input: "n3w")
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(try desktop.secretTool("lookup", "network", "home").stdout == "n3w")

        // Without the option, an item stays on the device that stored it — after a full round on both.
        laptop.sandbox.stop()
        try laptop.sandbox.start(latchkeyd, ["--verbose", "--secret-service"])
        try laptop.sandbox.unlock()
        let local = try laptop.secretTool("store", "--label=Local", "scope", "laptop", input: "stays")
        #expect(local.status == 0, "\(local.stderr)")
        #expect(try laptop.sandbox.cli("sync", "now").status == 0)
        #expect(try desktop.sandbox.cli("sync", "now").status == 0)
        let absent = try desktop.secretTool("lookup", "scope", "laptop")
        #expect(absent.status == 1)
        #expect(absent.stdout == "")
        // And the synchronizable one the laptop got back is still its Secret Service's.
        try waitUntil("the change on the first device", seconds: 20) {
            try laptop.secretTool("lookup", "network", "home").stdout == "n3w"
        }
    }
}
