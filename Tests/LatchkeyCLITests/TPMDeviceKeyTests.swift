import Foundation
import Latchkey
import LatchkeyCLI
import LatchkeyTestSupport
import Testing

/// The device key sealed by the TPM (noDA): `dk`/`dku` items open without the passphrase on this machine
/// only, and ThisDeviceOnly items never open on another, not even with the recovery code.
@Suite(.dedicatedThreads) struct TPMDeviceKeyTests {
    /// A keychain holding an `ak` item (mail), a `dk` item (db), a `dku` item (host) and an `aku` item
    /// (local), enrolled with `tpm`.
    static func sandbox(_ tpm: SoftwareTPM) throws -> (CLISandbox, code: String) {
        let sandbox = CLISandbox()
        try sandbox.createKeychain()
        for (service, password, accessibility) in [
            ("mail", "hunter2", "ak"), ("db", "pg-pass", "dk"), ("host", "host-pass", "dku"),
            ("local", "local-pass", "aku"),
        ] {
            let added = try sandbox.run([
                "add-generic-password", "-s", service, "-a", "alice", "-w", password, "--accessibility", accessibility,
            ])
            #expect(added.status == 0, "\(added.stderr)")
        }
        let enrolled = try sandbox.run(["tpm", "enroll"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(enrolled.status == 0, "\(enrolled.stderr)")
        return (sandbox, String(enrolled.stdout.dropFirst("recovery code: ".count).dropLast()))
    }

    static func read(
        _ service: String, _ sandbox: CLISandbox, _ tpm: SoftwareTPM?, passphrase: String? = CLISandbox.passphrase
    ) throws -> HelperProcess.Output {
        var environment = TPMEnrollmentTests.environment(sandbox, tpm, passphrase: passphrase ?? "")
        if passphrase == nil { environment["LATCHKEY_PASSPHRASE"] = nil }
        return try sandbox.run(["find-generic-password", "-s", service, "-w"], environment: environment)
    }

    var deviceKeyFile: (CLISandbox) -> String { { $0.defaultKeychain + ".device-key" } }

    @Test func alwaysItemsOpenWithoutThePassphraseOnlyWithThisTPM() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, _) = try Self.sandbox(tpm)
        #expect(!FileManager.default.fileExists(atPath: deviceKeyFile(sandbox)))
        #expect(try Self.read("db", sandbox, tpm, passphrase: nil).stdout == "pg-pass\n")
        #expect(try Self.read("host", sandbox, tpm, passphrase: nil).stdout == "host-pass\n")
        let locked = try Self.read("mail", sandbox, tpm, passphrase: nil)
        #expect(locked.status == 36)
        tpm.stop()
        let noTPM = try Self.read("db", sandbox, tpm, passphrase: nil)
        #expect(noTPM.status == 36)
        #expect(
            noTPM.stderr.hasPrefix("latchkey: find-generic-password: User interaction is not allowed."),
            "\(noTPM.stderr)")
    }

    @Test func aCopyElsewhereReadsNoThisDeviceOnlyItemEvenWithTheRecoveryCode() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, code) = try Self.sandbox(tpm)
        let other = try SoftwareTPM()
        let elsewhere = CLISandbox()
        let copy = try HelperProcess.run(
            "/bin/cp", ["-a", sandbox.directory.path + "/data", elsewhere.directory.path + "/data"])
        #expect(copy.status == 0, "\(copy.stderr)")
        for service in ["db", "host"] {
            #expect(try Self.read(service, elsewhere, other, passphrase: nil).status == 36)
        }
        #expect(try Self.read("mail", elsewhere, other).status == LatchkeyCommandLine.exitStatus(for: .notAvailable))
        let recovered = try elsewhere.run(
            ["tpm", "recover", "--recovery-code-fd", "0"],
            environment: TPMEnrollmentTests.environment(elsewhere, other), input: Data(code.utf8))
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(try Self.read("mail", elsewhere, other).stdout == "hunter2\n")
        // dk moves with the code.
        #expect(try Self.read("db", elsewhere, other, passphrase: nil).stdout == "pg-pass\n")
        for service in ["host", "local"] {
            let gone = try Self.read(service, elsewhere, other)
            #expect(
                gone.status == LatchkeyCommandLine.exitStatus(for: .decode), "\(service): \(gone.stdout) \(gone.stderr)"
            )
            #expect(gone.stdout == "")
        }
        // New ThisDeviceOnly items work there.
        let added = try elsewhere.run(
            ["add-generic-password", "-s", "new", "-a", "alice", "-w", "fresh", "--accessibility", "dku"],
            environment: TPMEnrollmentTests.environment(elsewhere, other))
        #expect(added.status == 0, "\(added.stderr)")
        #expect(try Self.read("new", elsewhere, other, passphrase: nil).stdout == "fresh\n")
    }

    @Test func recoveryOnThisMachineKeepsThisDeviceOnlyItems() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, code) = try Self.sandbox(tpm)
        let recovered = try sandbox.run(
            ["tpm", "recover", "--recovery-code-fd", "0"], environment: TPMEnrollmentTests.environment(sandbox, tpm),
            input: Data(code.utf8))
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(try Self.read("local", sandbox, tpm).stdout == "local-pass\n")
        #expect(try Self.read("host", sandbox, tpm, passphrase: nil).stdout == "host-pass\n")
    }

    @Test func removeBringsTheDeviceKeyFileBack() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, _) = try Self.sandbox(tpm)
        let removed = try sandbox.run(["tpm", "remove"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(FileManager.default.fileExists(atPath: deviceKeyFile(sandbox)))
        tpm.stop()
        #expect(try Self.read("db", sandbox, nil, passphrase: nil).stdout == "pg-pass\n")
        #expect(try Self.read("local", sandbox, nil).stdout == "local-pass\n")
    }
}
