import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyCLI

/// `latchkey sync`'s failures against a real PostgreSQL: each cause its own exit status and a message
/// that names it first; refused rows fail the round after its summary; `status` reports a server out of
/// reach instead of failing; and the table in `latchkey help sync` and docs/SYNC.md is the one the code uses.
@Suite(.dedicatedThreads, .serialized) struct SyncExitStatusTests {
    /// A vault with two devices that synced one item: the laptop set it up, the desktop joined with the
    /// recovery code, on the server `conninfo` names.
    func vault(_ conninfo: String) throws -> (laptop: CLISandbox, desktop: CLISandbox) {
        let laptop = CLISandbox()
        let desktop = CLISandbox()
        for device in [laptop, desktop] { try device.createKeychain() }
        #expect(
            try laptop.run(
                "add-generic-password", "-a", "alice", "-s", "mail", "--synchronizable", "--password-stdin",
                input: "hunter2"
            ).status == 0)
        let setup = try laptop.run("sync", "setup", "--server", conninfo, "--name", "laptop")
        #expect(setup.status == 0, "\(setup.stderr)")
        let code = try #require(setup.stdout.firstMatch(of: /recovery code (\S+)/)?.1).description
        let codeFile = desktop.directory.file("recovery")
        #expect(
            FileManager.default.createFile(
                atPath: codeFile, contents: Data(code.utf8), attributes: [.posixPermissions: 0o600]))
        let join = try desktop.run(
            "sync", "join", "--server", conninfo, "--name", "desktop", "--recovery-code-file", codeFile)
        #expect(join.status == 0, "\(join.stderr)")
        return (laptop, desktop)
    }

    @Test func aMalformedConnectionStringIsAUsageError() throws {
        let device = CLISandbox()
        try device.createKeychain()
        for (server, reason) in [
            ("host=/tmp port", #"missing "=" after "port" in connection info string"#),
            ("postgresql://h/db?nonsense=1", #"invalid URI query parameter: "nonsense""#),
        ] {
            let output = try device.run("sync", "setup", "--server", server, "--name", "x")
            #expect(output.status == 64, "\(server)")
            #expect(output.stderr == "latchkey: sync: the connection string is not one libpq can read: \(reason)\n")
        }
        #expect(try device.run("sync", "now").status == 78, "nothing was set up")
    }

    @Test(arguments: SyncConnection.allCases) func aRoundThatRefusedRowsFailsAfterItsSummary(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let (laptop, desktop) = try vault(cluster.conninfo)
        #expect(
            try laptop.run(
                "add-generic-password", "-U", "-a", "alice", "-s", "mail", "--synchronizable", "--password-stdin",
                input: "changed"
            ).status == 0)
        #expect(try laptop.run("sync", "now").status == 0)
        // The server alters the new version's ciphertext before the desktop pulls it (a byte's bits flipped: set
        // to a fixed value, it was left unchanged one time in 256).
        try cluster.psql(
            "UPDATE latchkey.items SET ciphertext = set_byte(ciphertext, 29, get_byte(ciphertext, 29) # 255) WHERE version = 2"
        )
        let round = try desktop.run("sync", "now")
        #expect(round.status == 65)
        #expect(round.stdout == "pushed 0, pulled 1, applied 0, conflicts 0, rejected 1\n")
        #expect(
            round.stderr
                == "latchkey: sync: refused 1 row from the server that did not verify (altered, replayed or forged); "
                + "the items keep the versions they had, and latchkey sync status lists what was refused\n")
        #expect(try desktop.run("find-generic-password", "-a", "alice", "-s", "mail", "-w").stdout == "hunter2\n")
        let status = try desktop.run("sync", "status")
        #expect(status.status == 0)
        #expect(status.stdout.contains("\nrejected: 1\n  change "), "\(status.stdout)")
        #expect(
            status.stdout.contains(
                ": its ciphertext failed authentication (altered, or moved from another item, version or vault)\n"))
    }

    @Test func statusWithTheServerDownShowsWhatThisDeviceKnowsAndSaysSo() throws {
        let cluster = try PostgresCluster()
        let (laptop, _) = try vault(cluster.conninfo)
        cluster.stop()
        let status = try laptop.run("sync", "status")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stderr == "")
        let lines = status.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("vault: ") == true)
        #expect(lines.contains("device: laptop"))
        #expect(
            lines.contains {
                $0.hasPrefix("server: \(cluster.conninfo) (unreachable: connection to server on socket ")
            }, "\(status.stdout)")
        #expect(lines.last == "devices: unknown (the server cannot be reached)")
        let round = try laptop.run("sync", "now")
        #expect(round.status == 69)
        #expect(
            round.stderr.hasPrefix("latchkey: sync: cannot reach the sync server: connection to server on socket "),
            "\(round.stderr)")
    }

    @Test(arguments: SyncConnection.allCases) func namesThatAreNotThereHaveTheirOwnStatus(_ connection: SyncConnection)
        throws
    {
        let cluster = try SyncTestServer(connection)
        let (laptop, _) = try vault(cluster.conninfo)
        let device = try laptop.run("sync", "remove-device", "tablet")
        #expect(device.status == 82)
        #expect(
            device.stderr
                == "latchkey: sync: the vault has no device named tablet; latchkey sync status lists the devices\n")
        let conflict = try laptop.run("sync", "conflicts", "--restore", "7")
        #expect(conflict.status == 82)
        #expect(conflict.stderr == "latchkey: sync: there is no conflict 7; latchkey sync conflicts lists them\n")
        let joined = CLISandbox()
        try joined.createKeychain()
        let taken = try joined.run("sync", "join", "--server", cluster.conninfo, "--name", "laptop", "--wait", "0")
        #expect(taken.status == 79)
        #expect(taken.stderr == "latchkey: sync: the vault has a device named laptop already\n")
        // A keychain's own failure keeps the tool's rule: a wrong passphrase is 51.
        let wrong = try laptop.run(
            ["sync", "status"],
            environment: laptop.environment.merging(["LATCHKEY_PASSPHRASE": "not it"]) { _, new in new })
        #expect(wrong.status == 51)
        #expect(wrong.stderr == "latchkey: sync: The user name or passphrase you entered is not correct.\n")
    }

    @Test func theHelpAndDocsSYNCmdListTheStatusesTheCodeUses() throws {
        let help = try CLISandbox().run("help", "sync").stdout
        var expected = "\nExit statuses:\n"
        for (status, meaning) in SyncExitStatus.table {
            expected += "  " + String(status).padding(toLength: 5, withPad: " ", startingAt: 0) + meaning + "\n"
        }
        #expect(help.hasSuffix(expected), "\(help)")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let docs = try String(contentsOf: root.appendingPathComponent("docs/SYNC.md"), encoding: .utf8)
        let rows = docs.split(separator: "\n").filter {
            $0.range(of: #"^\| \d+ \| "#, options: .regularExpression) != nil
        }.map(String.init)
        #expect(rows == SyncExitStatus.table.map { "| \($0.status) | \($0.meaning) |" })
    }
}
