import Foundation
import LatchkeyEngine
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// latchkeyd --backup-directory: snapshots on a schedule while another process writes to the keychain and
/// is killed with SIGKILL mid-transaction, and while the agent itself is killed with SIGKILL mid-snapshot —
/// every snapshot left is whole, verifies, and holds each transaction all or not at all.
@Suite(.dedicatedThreads, .serialized) struct AgentSnapshotTests {
    static let batch = 150
    /// Killed writers: 4, or 40 with LATCHKEY_SOAK=1.
    static var rounds: Int { ProcessInfo.processInfo.environment["LATCHKEY_SOAK"] == "1" ? 40 : 4 }

    /// The snapshot files of `directory`, and its temporary files.
    func files(_ directory: String) -> (snapshots: [String], temporary: [String]) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return (
            names.filter { $0.hasSuffix(".lksnapshot") }.sorted().map { directory + "/" + $0 },
            names.filter { $0.contains(".writing-") }
        )
    }

    /// How many items of `service` the snapshot holds, after checking it whole.
    func count(_ path: String, service: String, in sandbox: AgentSandbox) throws -> (all: Int, service: Int) {
        let copy = try SnapshotCopy(path, environment: ["TMPDIR": sandbox.directory.path])
        defer { copy.close() }
        #expect(try copy.keychain.lastChangeSequence == copy.snapshot.sequence)
        try copy.keychain.unlock(with: Passphrase(AgentSandbox.passphrase))
        let everything = ItemQuery(.genericPassword, limit: .all, returning: [.attributes])
        let all =
            copy.snapshot.itemCount == 0
            ? []
            : try copy.keychain.copyMatching(
                everything,
                caller: CallerIdentity(applicationIdentifier: "test", accessGroups: [CallerIdentity.wildcardGroup]))
        #expect(all.count == copy.snapshot.itemCount, "the header's count is the snapshot's")
        return (all.count, all.filter { $0[.service]?.stringValue == service }.count)
    }

    @Test func snapshotsStayWholeThroughKilledWritersAndAKilledAgent() throws {
        let sandbox = try AgentSandbox()
        let backups = sandbox.directory.file("backups")
        // A writer in another process: an import of `batch` items in one transaction, killed at some point.
        let items = (0..<Self.batch).map { index in
            KeychainBackup.Item(
                itemClass: .genericPassword,
                attributes: [.service: .string("batch"), .account: .string("item \(index)")],
                data: Data("secret \(index)".utf8))
        }
        let file = sandbox.directory.file("batch.lkb")
        try KeychainBackup.seal(items, passphrase: Passphrase("batch"), keyDerivation: .minimum)
            .write(to: URL(fileURLWithPath: file))
        let writerEnvironment = sandbox.withPassphrase.merging(["LATCHKEY_BACKUP_PASSPHRASE": "batch"]) { _, new in new
        }
        let agentArguments = [
            "--verbose", "--backup-directory", backups, "--backup-every", "1s", "--backup-keep", "1000",
        ]
        try sandbox.start(HelperProcess.product("latchkeyd"), agentArguments)
        try sandbox.unlock()
        try waitUntil("the first snapshot") { !files(backups).snapshots.isEmpty }

        var generator = SystemRandomNumberGenerator()
        for round in 0..<Self.rounds {
            #expect(
                try sandbox.cli("add-generic-password", "-a", "round \(round)", "-s", "single", "-w", "x").status == 0)
            let writer = try SpawnedProcess(
                HelperProcess.product("latchkey"), ["import", "-i", file], environment: writerEnvironment,
                log: sandbox.directory.file("writer.log"))
            Thread.sleep(forTimeInterval: Double.random(in: 0.05...0.6, using: &generator))
            writer.stop(signal: SIGKILL)
            let before = files(backups).snapshots.count
            try waitUntil("a snapshot after round \(round)", seconds: 15) { files(backups).snapshots.count > before }
        }
        // The agent killed at some moment of a snapshot's second, then started again.
        Thread.sleep(forTimeInterval: Double.random(in: 0...0.9, using: &generator))
        sandbox.stop(signal: SIGKILL)
        #expect(try sandbox.cli("add-generic-password", "-a", "after the kill", "-s", "single", "-w", "x").status == 0)
        let before = files(backups).snapshots.count
        try sandbox.start(HelperProcess.product("latchkeyd"), agentArguments)
        try waitUntil("a snapshot from the new agent", seconds: 15) { files(backups).snapshots.count > before }
        sandbox.stop()

        let (snapshots, temporary) = files(backups)
        #expect(temporary.isEmpty, "a killed writer's temporary file is removed: \(temporary)")
        #expect(snapshots.count >= Self.rounds + 2)
        var singles: [Int] = []
        for path in snapshots {
            let counted = try count(path, service: "batch", in: sandbox)
            #expect([0, Self.batch].contains(counted.service), "\(counted.service) of a \(Self.batch)-item import")
            singles.append(counted.all - counted.service)
        }
        #expect(singles == singles.sorted(), "snapshots in the order taken")
        #expect(singles.last == Self.rounds + 1)
    }

    @Test func aDirectoryThatCannotBeWrittenIsReportedWithoutVerbose() throws {
        let sandbox = try AgentSandbox()
        _ = FileManager.default.createFile(atPath: sandbox.directory.file("plain-file"), contents: Data())
        let directory = sandbox.directory.file("plain-file") + "/backups"
        try sandbox.start(
            HelperProcess.product("latchkeyd"), ["--backup-directory", directory, "--backup-every", "1s"])
        let expected =
            "latchkeyd: backup: I/O error. (cannot create directory \(directory): Not a directory); trying again in 1 s\n"
        try waitUntil("the failure reported twice") { sandbox.agentLog.components(separatedBy: expected).count > 2 }
        sandbox.stop()
        #expect(sandbox.agentLog.replacingOccurrences(of: expected, with: "").isEmpty, "\(sandbox.agentLog)")
    }

    @Test func badScheduleValuesAreUsageErrors() throws {
        let binary = HelperProcess.product("latchkeyd")
        let cases: [([String], String)] = [
            (
                ["--backup-every", "0"],
                "latchkeyd: --backup-every takes a span such as 1d, 12h, 30m or 90s, not \"0\"\n"
            ),
            (
                ["--backup-every", "367d"],
                "latchkeyd: --backup-every takes a span such as 1d, 12h, 30m or 90s, not \"367d\"\n"
            ),
            (
                ["--backup-keep", "0"],
                "latchkeyd: --backup-keep takes a number of snapshots from 1 to 100000, not \"0\"\n"
            ),
        ]
        for (arguments, message) in cases {
            let output = try HelperProcess.run(binary, arguments, environment: ["PATH": "/usr/bin:/bin"])
            #expect(output.status == 64)
            #expect(output.stderr == message)
        }
        let fromEnvironment = try HelperProcess.run(
            binary, [], environment: ["PATH": "/usr/bin:/bin", "LATCHKEY_BACKUP_EVERY": "soon"])
        #expect(fromEnvironment.status == 64)
        #expect(
            fromEnvironment.stderr
                == "latchkeyd: LATCHKEY_BACKUP_EVERY takes a span such as 1d, 12h, 30m or 90s, not \"soon\"\n")
    }
}
