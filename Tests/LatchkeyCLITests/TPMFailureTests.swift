import Foundation
import Latchkey
import LatchkeyCLI
import LatchkeyTestSupport
import Testing

/// Every TPM failure reaches the user as an Apple status naming the TPM's cause, and loses nothing: a
/// garbled sealed object, a malformed enrollment, a TPM that stops answering half-way through a call.
@Suite(.dedicatedThreads) struct TPMFailureTests {
    /// Rewrites the keychain's `tpm-enrollment` row with python3's sqlite3: `change` is Python over `blob`
    /// (a bytearray) that alters it.
    static func alterEnrollment(_ sandbox: CLISandbox, _ change: String) throws {
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            blob = bytearray(db.execute("SELECT value FROM meta WHERE name = 'tpm-enrollment'").fetchone()[0])
            \(change)
            db.execute("UPDATE meta SET value = ? WHERE name = 'tpm-enrollment'", (bytes(blob),))
            db.commit()
            """
        let output = try HelperProcess.run("/usr/bin/python3", ["-c", script, sandbox.defaultKeychain])
        #expect(output.status == 0, "\(output.stderr)")
    }

    @Test func aGarbledSealedObjectIsErrSecDecodeAndTheRecoveryCodeStillOpens() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, code) = try TPMEnrollmentTests.enrolledSandbox(tpm)
        // The passphrase object's private area ends 4 + 4 + name + 4 + public + 4 + private into the record:
        // flip a byte in the middle of it (its encrypted sensitive part).
        try Self.alterEnrollment(
            sandbox,
            """
            def field(offset):
                length = int.from_bytes(blob[offset:offset + 4], "little")
                return offset + 4, length
            offset, length = field(4); offset, length = field(offset + length); offset, length = field(offset + length)
            blob[offset + length // 2] ^= 0x40
            """)
        let read = try TPMEnrollmentTests.readPassword(sandbox, tpm)
        #expect(read.status == LatchkeyCommandLine.exitStatus(for: .decode))
        #expect(
            read.stderr.hasPrefix(
                "latchkey: find-generic-password: Unable to decode the provided data. (the TPM-sealed object is damaged (loading the sealed object: "
            ), "\(read.stderr)")
        #expect(try tpm.lockoutState().failedTries == 0)
        let recovered = try sandbox.run(
            ["tpm", "recover", "--recovery-code-fd", "0"], environment: TPMEnrollmentTests.environment(sandbox, tpm),
            input: Data(code.utf8))
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(try TPMEnrollmentTests.readPassword(sandbox, tpm).stdout == "hunter2\n")
    }

    @Test func aMalformedEnrollmentStillLetsTheRecoveryCodeOpen() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, code) = try TPMEnrollmentTests.enrolledSandbox(tpm)
        try Self.alterEnrollment(sandbox, "del blob[len(blob) - 3:]")
        let read = try TPMEnrollmentTests.readPassword(sandbox, tpm)
        #expect(read.status == LatchkeyCommandLine.exitStatus(for: .decode))
        #expect(
            read.stderr
                == "latchkey: find-generic-password: Unable to decode the provided data. (the TPM enrollment is malformed; the recovery code opens the keychain (latchkey tpm recover))\n"
        )
        let recovered = try sandbox.run(
            ["tpm", "recover", "--recovery-code-fd", "0", "--no-tpm"],
            environment: TPMEnrollmentTests.environment(sandbox, tpm), input: Data(code.utf8))
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(try TPMEnrollmentTests.readPassword(sandbox, nil).stdout == "hunter2\n")
    }

    /// A proxy in front of `tpm` that cuts the connection at its `cut`-th command.
    static func proxy(_ tpm: SoftwareTPM, cut: Int, log: String) throws -> (SpawnedProcess, tcti: String) {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tools/tpm-cut-proxy.py").path
        let socket = log + ".sock"
        let process = try SpawnedProcess(
            "/usr/bin/python3", [script, socket, tpm.socketPath, String(cut)],
            environment: ["PATH": "/usr/bin:/bin"], log: log)
        try waitUntil("the proxy listens") {
            (try? String(contentsOfFile: log, encoding: .utf8))?.contains("ready") == true
        }
        return (process, "swtpm:path=\(socket)")
    }

    /// The TPM stops answering at each command of an unlock in turn: every run either succeeds or fails
    /// with errSecNotAvailable naming the TPM, and the keychain opens afterwards with no lockout counted.
    @Test func aTPMThatVanishesMidCallIsErrSecNotAvailable() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, _) = try TPMEnrollmentTests.enrolledSandbox(tpm)
        let logs = TemporaryDirectory()
        var succeeded = false
        for cut in 1...24 where !succeeded {
            let (proxy, tcti) = try Self.proxy(tpm, cut: cut, log: logs.file("proxy-\(cut).log"))
            defer { proxy.stop() }
            var environment = TPMEnrollmentTests.environment(sandbox, tpm)
            environment["LATCHKEY_TPM_TCTI"] = tcti
            let read = try sandbox.run(
                ["find-generic-password", "-s", "mail", "-a", "alice", "-w"], environment: environment)
            if read.status == 0 {
                #expect(read.stdout == "hunter2\n")
                succeeded = true
            } else {
                #expect(read.status == LatchkeyCommandLine.exitStatus(for: .notAvailable), "cut \(cut): \(read.stderr)")
                #expect(
                    read.stderr.hasPrefix(
                        "latchkey: find-generic-password: No keychain is available. (no TPM answers at \(tcti) ("),
                    "cut \(cut): \(read.stderr)")
            }
        }
        #expect(succeeded)
        #expect(try TPMEnrollmentTests.readPassword(sandbox, tpm).stdout == "hunter2\n")
        #expect(try tpm.lockoutState().failedTries == 0)
    }

    /// The same for enroll: cut anywhere, the keychain is either enrolled or as it was, and opens.
    @Test func enrollCutMidCallLeavesAKeychainThatOpens() throws {
        let tpm = try SoftwareTPM()
        let sandbox = CLISandbox()
        try sandbox.createKeychain()
        #expect(try sandbox.run(["add-generic-password", "-s", "mail", "-a", "alice", "-w", "hunter2"]).status == 0)
        let logs = TemporaryDirectory()
        var enrolled = false
        for cut in 1...40 where !enrolled {
            let (proxy, tcti) = try Self.proxy(tpm, cut: cut, log: logs.file("proxy-\(cut).log"))
            defer { proxy.stop() }
            var environment = TPMEnrollmentTests.environment(sandbox, tpm)
            environment["LATCHKEY_TPM_TCTI"] = tcti
            let enroll = try sandbox.run(["tpm", "enroll"], environment: environment)
            if enroll.status == 0 {
                enrolled = true
            } else {
                #expect(
                    enroll.status == LatchkeyCommandLine.exitStatus(for: .notAvailable), "cut \(cut): \(enroll.stderr)")
                #expect(enroll.stdout == "")
                #expect(try TPMEnrollmentTests.readPassword(sandbox, nil).stdout == "hunter2\n", "cut \(cut)")
            }
        }
        #expect(enrolled)
        #expect(try TPMEnrollmentTests.readPassword(sandbox, tpm).stdout == "hunter2\n")
    }
}
