import Foundation
import LatchkeyEngine
import LatchkeyTestSupport
import Testing

/// latchkeyd syncs in the background: it pushes after each change it serves, pulls when the server's NOTIFY
/// rings (through PgBouncer: when its poll finds a change), keeps working while the server is away and
/// catches up when it is back.
@Suite(.dedicatedThreads, .serialized) struct AgentSyncTests {
    func find(_ sandbox: AgentSandbox, _ account: String) throws -> String? {
        let found = try sandbox.cli("find-generic-password", "-a", account, "-s", "mail", "-w")
        return found.status == 0 ? found.stdout : nil
    }

    @Test(arguments: SyncConnection.allCases) func theAgentPushesWhatItServesAndPullsWhenTheServerRings(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let laptop = try AgentSandbox()
        let desktop = try AgentSandbox()
        #expect(
            try laptop.cli("add-generic-password", "-a", "first", "-s", "mail", "--synchronizable", "-w", "one").status
                == 0)
        let setup = try laptop.cli("sync", "setup", "--server", cluster.conninfo, "--name", "laptop")
        #expect(setup.status == 0, "\(setup.stderr)")
        let code = try #require(setup.stdout.firstMatch(of: /recovery code (\S+)/)?.1).description
        let codeFile = desktop.directory.file("recovery")
        #expect(
            FileManager.default.createFile(
                atPath: codeFile, contents: Data(code.utf8), attributes: [.posixPermissions: 0o600]))
        let join = try desktop.cli(
            "sync", "join", "--server", cluster.conninfo, "--name", "desktop", "--recovery-code-file", codeFile)
        #expect(join.status == 0, "\(join.stderr)")

        try desktop.start()
        try desktop.unlock()
        try waitUntil("the agent syncs", seconds: 20) {
            desktop.agentLog.contains("sync: this keychain syncs with vault")
        }

        // Pulled when the laptop's push rings the server's doorbell (or the poll sees it): nobody runs sync on the desktop.
        #expect(
            try laptop.cli("add-generic-password", "-a", "second", "-s", "mail", "--synchronizable", "-w", "two").status
                == 0)
        #expect(try laptop.cli("sync", "now").status == 0)
        try waitUntil("the desktop's agent pulls", seconds: 20) { try find(desktop, "second") == "two\n" }

        // Pushed after a change the agent served.
        #expect(
            try desktop.cli("add-generic-password", "-a", "third", "-s", "mail", "--synchronizable", "-w", "three")
                .status == 0)
        try waitUntil("the laptop sees the desktop's change", seconds: 20) {
            _ = try laptop.cli("sync", "now")
            return try find(laptop, "third") == "three\n"
        }

        // The server goes away: the desktop keeps working, and catches up when it is back.
        cluster.stop()
        #expect(
            try desktop.cli("add-generic-password", "-a", "offline", "-s", "mail", "--synchronizable", "-w", "four")
                .status == 0)
        #expect(try find(desktop, "offline") == "four\n")
        try waitUntil("the agent notices the server is gone", seconds: 20) { desktop.agentLog.contains("retrying in") }
        try cluster.start()
        try waitUntil("the desktop's offline change reaches the laptop", seconds: 60) {
            _ = try laptop.cli("sync", "now")
            return try find(laptop, "offline") == "four\n"
        }
        for secret in ["one", "two", "three", "four"] {
            #expect(!desktop.agentLog.contains(" \(secret)"), "a secret in the log")
        }
    }
}
