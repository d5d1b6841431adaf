import Foundation
import LatchkeyPOSIX
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

@Suite(.dedicatedThreads) struct DoctorAndDumpTests {
    let sandbox = CLISandbox()

    /// doctor's line on tracing, for this machine's `kernel.yama.ptrace_scope`.
    static var tracingLine: String {
        // No Yama: no file.
        let scope = (try? String(contentsOfFile: "/proc/sys/kernel/yama/ptrace_scope", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        switch scope {
        case nil:
            return
                "warning  Yama is not enabled (no kernel.yama.ptrace_scope): any program of this user may trace another and act as it, so per-program access stops only programs that do not"
        case 0:
            return
                "warning  kernel.yama.ptrace_scope is 0: any program of this user may trace another and act as it, so per-program access stops only programs that do not; `sysctl kernel.yama.ptrace_scope=1` limits tracing to a program's own children"
        case 1: return "ok       kernel.yama.ptrace_scope is 1: a program may trace only its own children"
        case 2: return "ok       kernel.yama.ptrace_scope is 2: only a program with CAP_SYS_PTRACE may trace another"
        case let value?: return "ok       kernel.yama.ptrace_scope is \(value): no program may trace another"
        }
    }

    /// The second review (issue 30, point 2): doctor says what the kernel lets programs of one user do to each
    /// other, which is what per-program access can promise.
    @Test func theTracingSettingIsReported() throws {
        let directory = TemporaryDirectory()
        for (value, expected) in [("0\n", 0), ("1\n", 1), ("2", 2), ("3\n", 3), ("x\n", nil)] as [(String, Int?)] {
            try value.write(toFile: directory.file("scope"), atomically: true, encoding: .utf8)
            #expect(Processes.ptraceScope(file: directory.file("scope")) == expected, "\(value)")
        }
        #expect(Processes.ptraceScope(file: directory.file("none")) == nil)
    }

    @Test func aHealthyKeychain() throws {
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "a", "-s", "s", "--password-stdin", input: "x")
        let doctor = try sandbox.run(
            ["doctor"],
            environment: sandbox.environment.merging(["LATCHKEY_PASSPHRASE": CLISandbox.passphrase]) { _, new in new })
        #expect(doctor.status == 0)
        #expect(
            doctor.stdout == """
                ok       keychain \(sandbox.defaultKeychain) (from the default)
                warning  LATCHKEY_PASSPHRASE is set: every process of this user can read it; prefer a prompt, --passphrase-fd or a 0600 key file
                ok       keychain file mode 0600
                ok       directory mode 0700
                ok       durability: journal mode wal, synchronous FULL, secure_delete on (an acknowledged write survives a power cut)
                ok       format version 6 (this Latchkey reads up to 6)
                warning  key derivation Argon2id, 19 MiB, 2 passes is weaker than the default (Argon2id, 64 MiB, 3 passes); strengthen it with `latchkey set-keychain-password --kdf-memory 64 --kdf-passes 3`
                ok       TPM: not enrolled (`latchkey tpm enroll` binds the keychain to this machine's TPM)
                ok       device key present: items readable at any time open without the passphrase
                ok       no agent serves it: programs open it themselves, with the passphrase
                \(Self.tracingLine)
                ok       integrity: 1 rows: 1 verified, 0 damaged, 0 unavailable (locked), 0 tombstones; structure: ok

                """)
    }

    /// Without a terminal or any other source of the passphrase, the integrity check is skipped and said so;
    /// everything that needs no passphrase is still checked, and the run does not fail for it.
    @Test func withoutAPassphraseTheIntegrityCheckIsSkippedNotFailed() throws {
        try sandbox.createKeychain()
        // No LATCHKEY_PASSPHRASE, no terminal.
        let doctor = try sandbox.run(["doctor"], environment: sandbox.environment)
        #expect(doctor.status == 0, "\(doctor.stderr)")
        #expect(doctor.stdout.contains("ok       format version 6 (this Latchkey reads up to 6)\n"))
        #expect(
            doctor.stdout.hasSuffix(
                """
                ok       no agent serves it: programs open it themselves, with the passphrase
                \(Self.tracingLine)
                skipped  integrity: it needs the passphrase, and no terminal to prompt on; use --passphrase-fd, --passphrase-file, or LATCHKEY_PASSPHRASE

                """), "\(doctor.stdout)")
        let chosen = try sandbox.run(["doctor", "--no-unlock"], environment: sandbox.environment)
        #expect(chosen.status == 0)
        #expect(chosen.stdout.hasSuffix("skipped  integrity: --no-unlock\n"))
    }

    @Test func unsafePermissionsAndDamagedItemsAreErrors() throws {
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "a", "-s", "s", "--password-stdin", input: "x")
        try FileManager.default.setAttributes([.posixPermissions: 0o666], ofItemAtPath: sandbox.defaultKeychain)
        let open = try sandbox.run("doctor")
        #expect(open.status == 1)
        #expect(
            open.stdout.contains(
                "error    the keychain file's mode is 0666; run `chmod 600 \(sandbox.defaultKeychain)`"))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: sandbox.defaultKeychain)

        let db = try Connection(path: sandbox.defaultKeychain, mode: .readWrite)
        try db.run("UPDATE items SET attrs = zeroblob(60)")
        let damaged = try sandbox.run("doctor")
        #expect(damaged.status == 1)
        #expect(damaged.stdout.contains("error    integrity: 1 rows: 0 verified, 1 damaged"))
        #expect(
            damaged.stdout.contains(
                ": an item's attributes failed authentication; the item is damaged; restore it from a backup, or delete it"
            ))
        #expect(try sandbox.run("doctor", "--no-unlock").status == 0)
    }

    @Test func aMissingKeychain() throws {
        let doctor = try sandbox.run("doctor")
        #expect(doctor.status == 1)
        #expect(
            doctor.stdout.hasSuffix(
                "error    the keychain does not exist; create it with `latchkey create-keychain \(sandbox.defaultKeychain)`\n"
            ))
    }

    /// The command doctor suggests for a missing keychain, pasted into a shell as it is printed, creates the
    /// very keychain doctor looked at — named by the argument, by LATCHKEY_KEYCHAIN, or the default.
    @Test(arguments: [["doctor"], ["doctor", "my keychain's.keychain"], ["doctor", "./here.keychain"]])
    func theSuggestedCommandCreatesTheMissingKeychain(_ arguments: [String]) throws {
        var environment = sandbox.unattended
        environment["PATH"] = URL(fileURLWithPath: sandbox.binary).deletingLastPathComponent().path + ":/usr/bin:/bin"
        environment["LATCHKEY_KEYCHAIN"] = arguments.count == 1 ? "./named.keychain" : nil
        let doctor = try HelperProcess.run(
            sandbox.binary, arguments, environment: environment, currentDirectory: sandbox.directory.path)
        #expect(doctor.status == 1)
        let suggestion = try #require(
            doctor.stdout.components(separatedBy: "create it with `").last?.components(separatedBy: "`").first)
        #expect(
            suggestion.hasPrefix("latchkey create-keychain ") && suggestion.count > "latchkey create-keychain ".count,
            "\(suggestion)")
        let created = try HelperProcess.run(
            "/bin/bash", ["-c", suggestion], environment: environment, currentDirectory: sandbox.directory.path)
        #expect(created.status == 0, "\(created.stderr)")
        let again = try HelperProcess.run(
            sandbox.binary, arguments, environment: environment, currentDirectory: sandbox.directory.path)
        #expect(again.status == 0, "\(again.stdout)")
    }

    @Test func dumpShowsSecretsOnlyWhenAsked() throws {
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "a", "-s", "s", "--password-stdin", input: "secret-one")
        try sandbox.run(
            "add-internet-password", "-a", "b", "-s", "h", "--access-group", "other.group", "--password-stdin",
            input: "secret-two")
        let plain = try sandbox.run("dump-keychain")
        #expect(plain.status == 0)
        #expect(plain.stdout.components(separatedBy: "keychain: ").count == 3, "both items, both groups")
        #expect(!plain.stdout.contains("secret-"))
        let withData = try sandbox.run("dump-keychain", "-d")
        #expect(withData.stdout.contains("data:\n\"secret-one\"\n"))
        #expect(withData.stdout.contains("data:\n\"secret-two\"\n"))
        #expect(try sandbox.run("dump-keychain", "-a").status == 64)
    }
}
