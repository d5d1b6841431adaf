import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The attacks of the adversarial review on the command line (issue 15: F9–F12 and the smaller findings),
/// each reproduced.
@Suite(.dedicatedThreads) struct CLIHardeningTests {
    let sandbox = CLISandbox()
    static let isRoot = getuid() == 0
    static let nobody: (uid: uid_t, gid: gid_t)? = getpwnam("nobody").map { ($0.pointee.pw_uid, $0.pointee.pw_gid) }

    func backupEnvironment() -> [String: String] {
        sandbox.unattended.merging(["LATCHKEY_BACKUP_PASSPHRASE": "backup passphrase"]) { _, new in new }
    }

    /// Runs a shell command line with the sandbox's environment (for umasks and bytes no String holds).
    func shell(_ script: String, environment: [String: String]? = nil) throws -> HelperProcess.Output {
        let path = URL(fileURLWithPath: sandbox.binary).deletingLastPathComponent().path
        var environment = environment ?? sandbox.unattended
        environment["PATH"] = path + ":/usr/bin:/bin"
        return try HelperProcess.run("/bin/bash", ["-c", script], environment: environment)
    }

    // MARK: F9: export's file

    @Test func anExportIsNeverReadableByOthersNorWrittenOverAnything() throws {
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "alice", "-s", "mail", "--password-stdin", input: "secret")
        let out = sandbox.directory.file("out")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: false)
        // Whatever the umask, the backup is 0600 from its first byte (it is written under a 0600 temporary name).
        let export = try shell("umask 000; latchkey export -o \(out)/backup.lkb", environment: backupEnvironment())
        #expect(export.status == 0, "\(export.stderr)")
        #expect(try permissions(out + "/backup.lkb") == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: out) == ["backup.lkb"], "no temporary file is left")
        // A name taken meanwhile — even by a dangling symbolic link — is never replaced or followed.
        try FileManager.default.createSymbolicLink(atPath: out + "/link.lkb", withDestinationPath: out + "/target")
        let overLink = try sandbox.run(["export", "-o", out + "/link.lkb"], environment: backupEnvironment())
        #expect(overLink.status == 1)
        #expect(overLink.stderr == "latchkey: export: \(out)/link.lkb already exists; choose a new file name\n")
        #expect(!FileManager.default.fileExists(atPath: out + "/target"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: out).sorted() == ["backup.lkb", "link.lkb"])
    }

    // MARK: F10: a crafted backup's cost

    /// A real backup, with its key derivation record changed to ask for `passes` and `memory` bytes.
    func craftedBackup(passes: UInt64, memory: UInt64) throws -> String {
        let backup = try KeychainBackup.seal(
            [
                KeychainBackup.Item(
                    itemClass: .genericPassword, attributes: [.service: .string("s")], data: Data("x".utf8))
            ],
            passphrase: Passphrase("backup passphrase"), keyDerivation: .minimum)
        var bytes = [UInt8](backup)
        // "LKBACKUP", format, then the KDF record: algorithm, passes (8, little-endian), memory (8), salt.
        withUnsafeBytes(of: passes.littleEndian) { bytes.replaceSubrange(10..<18, with: $0) }
        withUnsafeBytes(of: memory.littleEndian) { bytes.replaceSubrange(18..<26, with: $0) }
        let path = sandbox.directory.file("crafted-\(passes)-\(memory).lkb")
        #expect(
            FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]))
        return path
    }

    @Test func aBackupAskingForACostlierDerivationThanTheKeychainsNeedsConsent() throws {
        try sandbox.createKeychain()  // 19 MiB, 2 passes; the default (64 MiB, 3 passes) is the larger.
        let before = try sandbox.snapshot()
        let huge = try craftedBackup(passes: 64, memory: 4 << 30)
        let refused = try sandbox.run(["import", "-i", huge], environment: backupEnvironment())
        #expect(refused.status == 206)
        #expect(
            refused.stderr
                == "latchkey: import: One or more parameters passed to a function were not valid. (the backup asks for "
                + "a key derivation of Argon2id, 4096 MiB, 64 passes, more than this keychain's Argon2id, 19 MiB, 2 passes; "
                + "pass --allow-expensive-kdf to derive it anyway)\n")
        #expect(try sandbox.snapshot() == before)
        // Within the default's cost it needs no consent; above it, --allow-expensive-kdf gives it.
        let backup = sandbox.directory.file("real.lkb")
        let items = [
            KeychainBackup.Item(
                itemClass: .genericPassword, attributes: [.service: .string("s"), .account: .string("a")],
                data: Data("restored".utf8))
        ]
        for (name, memory, passes) in [("cheap", UInt64(64) << 20, UInt64(3)), ("dear", UInt64(65) << 20, UInt64(3))] {
            let file = backup + "." + name
            let sealed = try KeychainBackup.seal(
                items, passphrase: Passphrase("backup passphrase"),
                keyDerivation: KeyDerivation(passes: passes, memoryBytes: memory))
            #expect(
                FileManager.default.createFile(atPath: file, contents: sealed, attributes: [.posixPermissions: 0o600]))
        }
        #expect(
            try sandbox.run(["import", "-i", backup + ".cheap"], environment: backupEnvironment()).stdout
                == "added 1, updated 0, skipped 0\n")
        #expect(try sandbox.run(["import", "-i", backup + ".dear"], environment: backupEnvironment()).status == 206)
        let consented = try sandbox.run(
            ["import", "-i", backup + ".dear", "--allow-expensive-kdf"], environment: backupEnvironment())
        #expect(consented.stdout == "added 0, updated 0, skipped 1\n", "\(consented.stderr)")
    }

    @Test func aBackupLargerThanAnyBackupIsRefusedBeforeItIsRead() throws {
        try sandbox.createKeychain()
        let path = sandbox.directory.file("huge.lkb")
        #expect(FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]))
        #expect(truncate(path, 3 << 30) == 0)  // Sparse: three GiB that take no disk.
        let refused = try sandbox.run(["import", "-i", path], environment: backupEnvironment())
        #expect(refused.status == 206)
        #expect(
            refused.stderr == "latchkey: import: One or more parameters passed to a function were not valid. "
                + "(\(path) has 3221225472 bytes; a backup has at most 2 GiB)\n")
    }

    // MARK: F11: the command line's own memory

    @Test(.enabled(if: isRoot && nobody != nil, "switching to another user needs root"))
    func theCommandLineWritesNoCoreAndHidesItsMemoryOnceItHandlesASecret() throws {
        let nobody = try #require(Self.nobody)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: sandbox.directory.path)
        for path in [sandbox.directory.path + "/data", sandbox.directory.path + "/run"] {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            #expect(chown(path, nobody.uid, nobody.gid) == 0)
        }
        let asNobody = ["--reuid=nobody", "--regid=nogroup", "--clear-groups", sandbox.binary]
        let environment = sandbox.unattended
        let created = try HelperProcess.run(
            "/usr/bin/setpriv", asNobody + ["create-keychain", "--kdf-memory", "19", "--kdf-passes", "2"],
            environment: environment)
        #expect(created.status == 0, "\(created.stderr)")
        let session = try PseudoTerminalSession(
            executable: "/usr/bin/setpriv",
            arguments: asNobody + ["add-generic-password", "-a", "alice", "-s", "mail", "-w"],
            environment: environment)
        #expect(session.expect("password data for new item: "))
        let pid = session.processIdentifier
        // Not dumpable: its /proc entries belong to root, not to its user, so no process of the user can
        // read its memory or attach to it.
        var info = stat()
        #expect(stat("/proc/\(pid)/mem", &info) == 0)
        #expect(info.st_uid == 0, "owned by uid \(info.st_uid)")
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }.map(String.init) ?? ""
        #expect(
            core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"], "\(core)")
        session.send("hunter2")
        #expect(session.expect("retype password for new item: "))
        session.send("hunter2")
        #expect(session.wait() == 0, "\(session.transcript)")
        // The control: a process of that user that handles no secret is dumpable (its entries are nobody's).
        let listing = try PseudoTerminalSession(
            executable: "/usr/bin/setpriv",
            arguments: ["--reuid=nobody", "--regid=nogroup", "--clear-groups", "/bin/sh", "-c", "echo ready; read x"],
            environment: environment)
        #expect(listing.expect("ready"))
        #expect(stat("/proc/\(listing.processIdentifier)/mem", &info) == 0)
        #expect(info.st_uid == nobody.uid)
        listing.send("")
        _ = listing.wait()
    }

    // MARK: F12: names that are not UTF-8

    @Test func argumentsThatAreNotUTF8AreRefusedNotRepaired() throws {
        try sandbox.createKeychain()
        #expect(try shell("latchkey add-generic-password -a $'\\xff' -s mail -w one").status == 206)
        let refused = try shell("latchkey add-generic-password -a $'\\xfe' -s mail -w two")
        #expect(
            refused.stderr
                == "latchkey: add-generic-password: One or more parameters passed to a function were not valid. "
                + "(argument 3 is not valid UTF-8)\n")
        // U+FFFD itself is a valid name, and the only item there is.
        #expect(try sandbox.run("add-generic-password", "-a", "\u{FFFD}", "-s", "mail", "-w", "three").status == 0)
        #expect(try sandbox.run("find-generic-password", "-s", "mail", "-w").stdout == "three\n")
        #expect(try shell("latchkey find-generic-password -a $'\\xff' -s mail").status == 206)
    }

    // MARK: Also seen

    @Test func aPassphraseFileMustBeASmallRegularFile() throws {
        try sandbox.createKeychain()
        let fifo = sandbox.directory.file("fifo")
        #expect(mkfifo(fifo, 0o600) == 0)
        let fromFifo = try sandbox.run(
            ["unlock-keychain", "--no-agent", "--passphrase-file", fifo], environment: sandbox.environment)
        #expect(fromFifo.status == 206)
        #expect(
            fromFifo.stderr == "latchkey: unlock-keychain: One or more parameters passed to a function were not valid. "
                + "(the key file \(fifo) is not a regular file (a symbolic link, a FIFO or a device))\n")
        let large = sandbox.directory.file("large")
        #expect(
            FileManager.default.createFile(
                atPath: large, contents: Data(repeating: 0x61, count: 65 << 10),
                attributes: [.posixPermissions: 0o600]))
        let fromLarge = try sandbox.run(
            ["unlock-keychain", "--no-agent", "--passphrase-file", large], environment: sandbox.environment)
        #expect(fromLarge.status == 206)
        #expect(
            fromLarge.stderr
                == "latchkey: unlock-keychain: One or more parameters passed to a function were not valid. "
                + "(the key file \(large) is larger than 64 KiB)\n")
    }

    @Test func theLargestTimeoutGetsTheSameAnswerWithAndWithoutTheAgent() throws {
        try sandbox.createKeychain()
        let expected =
            "latchkey: set-keychain-settings: One or more parameters passed to a function were not valid. "
            + "(the auto-lock timeout must be between 1 and 2147483647 seconds, not 9223372036854775807)\n"
        let embedded = try sandbox.run("set-keychain-settings", "-t", "9223372036854775807")
        #expect(embedded.status == 206)
        #expect(embedded.stderr == expected)
        #expect(try sandbox.run("unlock-keychain").status == 0)
        let agent = try sandbox.run("set-keychain-settings", "-t", "9223372036854775807")
        #expect(agent.status == 206)
        #expect(agent.stderr == expected)
        #expect(try sandbox.run("set-keychain-settings", "-t", "2147483647").status == 0)
    }
}
