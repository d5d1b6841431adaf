import Foundation
import LatchkeyTestSupport
import Testing

/// `latchkey sync …` through the built binary: two sandboxes are two devices of one vault on a PostgreSQL
/// server of the test's own.
@Suite(.dedicatedThreads, .serialized) struct SyncCommandTests {
    /// The vault id and the dates of a status (they change every run), masked.
    func masked(_ text: String) -> String {
        text.replacingOccurrences(of: #"[0-9a-f]{32}"#, with: "<VAULT>", options: .regularExpression)
            .replacingOccurrences(of: #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"#, with: "<DATE>", options: .regularExpression)
            .replacingOccurrences(of: #"\d{3}-\d{3}"#, with: "<CODE>", options: .regularExpression)
    }

    @Test(arguments: SyncConnection.allCases) func setupApproveJoinSyncStatusRemoveAndRecover(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let laptop = CLISandbox()
        let desktop = CLISandbox()
        let spare = CLISandbox()
        for device in [laptop, desktop, spare] { try device.createKeychain() }
        #expect(
            try laptop.run("add-generic-password", "-a", "alice", "-s", "mail", "--synchronizable", "-w", "hunter2")
                .status == 0)
        #expect(try laptop.run("add-generic-password", "-a", "bob", "-s", "mail", "-w", "stays-here").status == 0)

        let setup = try laptop.run("sync", "setup", "--server", cluster.conninfo, "--name", "laptop")
        #expect(setup.status == 0, "\(setup.stderr)")
        let lines = setup.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 5)
        #expect(masked(lines[0]) == "vault <VAULT> set up with this device as laptop")
        #expect(masked(lines[1]) == "fingerprint <CODE>")
        #expect(
            lines[2].range(of: #"^recovery code ([A-Z0-9]{4}-){7}[A-Z0-9]{4}$"#, options: .regularExpression) != nil)
        #expect(lines[4] == "pushed 1, pulled 1, applied 0, conflicts 0, rejected 0")
        let recoveryCode = String(lines[2].dropFirst("recovery code ".count))
        let fingerprint = lines[1]

        let join = try desktop.run("sync", "join", "--server", cluster.conninfo, "--name", "desktop", "--wait", "0")
        #expect(join.status == 0, "\(join.stderr)")
        let code = try #require(join.stdout.firstMatch(of: /approve (\d{3}-\d{3})/)?.1).description
        #expect(
            join.stdout
                == "waiting for approval: on a device of the vault, run  latchkey sync approve \(code)\nnot approved yet; this device stays waiting: latchkey sync now completes the join once approved\n"
        )
        let waiting = try desktop.run("sync", "now")
        #expect(waiting.status == 75)
        #expect(
            waiting.stderr
                == "latchkey: sync: this device waits for approval: run latchkey sync approve \(code) on a device of the vault\n"
        )

        #expect(
            try laptop.run("sync", "approve").stdout == "desktop  shows \(code)   (latchkey sync approve \(code))\n")
        let mistyped = try laptop.run("sync", "approve", "999-999")
        #expect(mistyped.status == 81)
        #expect(
            mistyped.stderr
                == "latchkey: sync: no device waiting to join shows the code 999-999; latchkey sync approve without a code lists the devices waiting\n"
        )
        let approve = try laptop.run("sync", "approve", code)
        #expect(
            approve.stdout
                == "approved desktop; the vault's fingerprint is \(fingerprint.dropFirst("fingerprint ".count)): desktop shows the same\n"
        )
        #expect(try laptop.run("sync", "approve").stdout == "no device is waiting to join\n")
        #expect(try desktop.run("sync", "now").stdout == "pushed 0, pulled 1, applied 1, conflicts 0, rejected 0\n")
        #expect(try desktop.run("find-generic-password", "-a", "alice", "-s", "mail", "-w").stdout == "hunter2\n")
        #expect(try desktop.run("find-generic-password", "-a", "bob", "-s", "mail").status == 44)

        let status = try laptop.run("sync", "status")
        #expect(
            masked(status.stdout) == """
                vault: <VAULT>
                device: laptop
                fingerprint: <CODE>
                server: \(cluster.conninfo)
                vault key: 1
                last sync: <DATE>
                cursor: 1
                pending: 0 local changes
                inbox: 0 rows waiting to be written (the keychain was locked)
                conflicts: 0
                rejected: 0
                devices:
                  desktop  active  last seen <DATE>
                  laptop  active  last seen <DATE>  (this device)

                """)

        // A change on the desktop reaches the laptop; then the laptop removes the desktop.
        #expect(
            try desktop.run(
                "add-generic-password", "-U", "-a", "alice", "-s", "mail", "--synchronizable", "-w", "changed"
            ).status == 0)
        #expect(try desktop.run("sync", "now").stdout == "pushed 1, pulled 1, applied 0, conflicts 0, rejected 0\n")
        #expect(try laptop.run("sync", "now").stdout == "pushed 0, pulled 1, applied 1, conflicts 0, rejected 0\n")
        #expect(try laptop.run("find-generic-password", "-a", "alice", "-s", "mail", "-w").stdout == "changed\n")
        #expect(
            try laptop.run("sync", "remove-device", "desktop").stdout
                == "removed desktop; the vault key is now key 2, which desktop does not have\n")
        let removed = try desktop.run("sync", "now")
        #expect(removed.status == 77)
        #expect(
            removed.stderr
                == "latchkey: sync: this device was removed from the vault: it gets no new keys and its pushes are refused; latchkey sync leave, then join again\n"
        )

        // A spare device joins with the recovery code from a file only its owner reads.
        let codeFile = spare.directory.file("recovery")
        #expect(
            FileManager.default.createFile(
                atPath: codeFile, contents: Data((recoveryCode + "\n").utf8), attributes: [.posixPermissions: 0o600]))
        let recovered = try spare.run(
            "sync", "join", "--server", cluster.conninfo, "--name", "spare", "--recovery-code-file", codeFile)
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(
            masked(recovered.stdout)
                == "joined vault <VAULT> as spare\nfingerprint <CODE> (every device of the vault shows the same)\npushed 0, pulled 1, applied 1, conflicts 0, rejected 0\n"
        )
        #expect(recovered.stdout.contains(fingerprint.dropFirst("fingerprint ".count)))
        #expect(try spare.run("find-generic-password", "-a", "alice", "-s", "mail", "-w").stdout == "changed\n")
        #expect(try spare.run("sync", "conflicts").stdout == "no conflicts\n")
        #expect(try spare.run("sync", "leave").status == 0)
        #expect(try spare.run("sync", "status").status == 78)
    }

    @Test func badInputGetsAClearErrorAndChangesNothing() throws {
        let cluster = try PostgresCluster()
        let device = CLISandbox()
        try device.createKeychain()
        let unknown = try device.run("sync", "bogus")
        #expect(unknown.status == 64)
        #expect(
            unknown.stderr.hasPrefix(
                "latchkey: sync: unknown sync action 'bogus'; one of: setup, join, approve, status, now, remove-device, conflicts, leave, schema"
            ))
        let notSetUp = try device.run("sync", "now")
        #expect(notSetUp.status == 78)
        #expect(
            notSetUp.stderr
                == "latchkey: sync: this keychain is not set up for sync: run latchkey sync setup, or latchkey sync join\n"
        )
        #expect(try device.run("sync", "join", "--server", cluster.conninfo, "--vault", "xyz").status == 64)
        let noVault = try device.run("sync", "join", "--server", cluster.conninfo, "--name", "x", "--wait", "0")
        #expect(noVault.status == 79)
        #expect(noVault.stderr == "latchkey: sync: the server holds no vault (latchkey sync setup makes one)\n")
        let unreachable = try device.run(
            "sync", "setup", "--server", "host=\(device.directory.path) port=1 dbname=none", "--name", "x")
        #expect(unreachable.status == 69)
        #expect(
            unreachable.stderr.hasPrefix(
                "latchkey: sync: cannot reach the sync server: connection to server on socket"), "\(unreachable.stderr)"
        )
        // Nothing was half set up: a real server works afterwards.
        #expect(try device.run("sync", "setup", "--server", cluster.conninfo, "--name", "x").status == 0)
        let again = try device.run("sync", "setup", "--server", cluster.conninfo, "--name", "x")
        #expect(again.status == 78)
        #expect(again.stderr == "latchkey: sync: this keychain is set up for sync already: latchkey sync leave first\n")
        #expect(try device.run("sync", "status", "extra").status == 64)
        let weakFile = device.directory.file("code")
        #expect(
            FileManager.default.createFile(
                atPath: weakFile, contents: Data("x".utf8), attributes: [.posixPermissions: 0o644]))
        let other = CLISandbox()
        try other.createKeychain()
        #expect(
            try other.run("sync", "join", "--server", cluster.conninfo, "--name", "y", "--recovery-code-file", weakFile)
                .status != 0)
        let wrong = device.directory.file("wrong")
        #expect(
            FileManager.default.createFile(
                atPath: wrong, contents: Data("AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA\n".utf8),
                attributes: [.posixPermissions: 0o600]))
        let refused = try other.run(
            "sync", "join", "--server", cluster.conninfo, "--name", "y", "--recovery-code-file", wrong)
        #expect(refused.status == 80)
        #expect(refused.stderr == "latchkey: sync: wrong recovery code: the recovery code is not this vault's\n")
    }

    @Test func aFirstSyncShowsItsProgressOnATerminalAndNothingOnAPipe() throws {
        let cluster = try PostgresCluster()
        let laptop = CLISandbox()
        let desktop = CLISandbox()
        for device in [laptop, desktop] { try device.createKeychain() }
        for account in ["a", "b", "c"] {
            #expect(
                try laptop.run("add-generic-password", "-a", account, "-s", "mail", "--synchronizable", "-w", "x")
                    .status == 0)
        }
        let setup = try laptop.run("sync", "setup", "--server", cluster.conninfo, "--name", "laptop")
        #expect(!setup.stderr.contains("syncing"), "no progress on a pipe")
        let code = try #require(setup.stdout.firstMatch(of: /recovery code (\S+)/)?.1).description
        let codeFile = desktop.directory.file("recovery")
        #expect(
            FileManager.default.createFile(
                atPath: codeFile, contents: Data(code.utf8), attributes: [.posixPermissions: 0o600]))
        let e = "\r\u{1B}[K"
        let joining = try PseudoTerminalSession(
            executable: desktop.binary,
            arguments: [
                "sync", "join", "--server", cluster.conninfo, "--name", "desktop", "--recovery-code-file", codeFile,
            ],
            environment: desktop.unattended)
        // Rows are written as they are pulled, page by page: one stage.
        #expect(joining.expect(e + "syncing: writing 0 of 3 items (0%)"))
        #expect(joining.expect(e + "syncing: writing 3 of 3 items (100%)"))
        #expect(
            joining.expect(e + "pushed 0, pulled 3, applied 3, conflicts 0, rejected 0\r\n"),
            "the meter's line is erased before the summary")
        #expect(joining.wait() == 0, "\(joining.transcript)")
    }

    @Test func thePGEnvironmentVariablesNameTheServerWhenServerIsLeftOut() throws {
        let cluster = try PostgresCluster()
        let device = CLISandbox()
        try device.createKeychain()
        let missing = try device.run("sync", "setup", "--name", "x")
        #expect(missing.status == 64)
        #expect(
            missing.stderr.hasPrefix(
                "latchkey: sync: name the server with --server (a libpq connection string or URI) or the PG* environment variables"
            ))
        let environment = device.unattended.merging([
            "PGHOST": cluster.directory, "PGUSER": "latchkey", "PGDATABASE": "latchkey",
        ]) { _, new in new }
        let setup = try device.run(["sync", "setup", "--name", "x"], environment: environment)
        #expect(setup.status == 0, "\(setup.stderr)")
        #expect(
            try device.run(["sync", "status"], environment: environment).stdout.contains(
                "server: (from the PG* environment variables)\n"))
        #expect(
            try device.run(["sync", "now"], environment: environment).stdout
                == "pushed 0, pulled 0, applied 0, conflicts 0, rejected 0\n")
    }

    @Test func theSchemaCommandPrintsTheCommittedSQLFile() throws {
        let sandbox = CLISandbox()
        let printed = try sandbox.run("sync", "schema")
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
            .appendingPathComponent("contrib/postgresql/latchkey-sync.sql")
        #expect(printed.stdout == (try String(contentsOf: file, encoding: .utf8)))
        // And a DBA can apply it by hand to an empty database; setup then finds the schema in place.
        let cluster = try PostgresCluster()
        try cluster.psql(printed.stdout)
        #expect(
            try cluster.psql("SELECT max(version) FROM latchkey.schema_version").trimmingCharacters(
                in: .whitespacesAndNewlines) == "1")
        try sandbox.createKeychain()
        #expect(try sandbox.run("sync", "setup", "--server", cluster.conninfo, "--name", "x").status == 0)
    }
}
