import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `tpm enroll --unattended --policy-key` and `tpm add-policy` killed with SIGKILL at points across their run:
/// the keychain is left as it was or as the command leaves it, and its passphrase opens it either way.
@Suite(.dedicatedThreads) struct TPMSignedPolicyCrashTests {
    static func status(_ sandbox: CLISandbox, _ tpm: SoftwareTPM) throws -> String {
        let status = try sandbox.run(["tpm", "status"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(status.status == 0, "\(status.stderr)")
        return status.stdout
    }

    @Test(arguments: [0, 50_000, 150_000, 300_000, 600_000] as [UInt32])
    func enrollKilledLeavesAKeychainThatOpens(_ delay: UInt32) throws {
        let tpm = try SoftwareTPM()
        let sandbox = CLISandbox()
        try sandbox.createKeychain()
        #expect(try sandbox.run(["add-generic-password", "-s", "mail", "-a", "alice", "-w", "hunter2"]).status == 0)
        _ = try TPMSignedPolicyTests.keyPair(sandbox, "signer")
        try TPMCrashTests.killed(
            sandbox, tpm,
            [
                "tpm", "enroll", "--unattended", "--pcrs", "16", "--policy-key",
                sandbox.directory.file("signer.pub.pem"),
            ],
            after: delay)
        let enrolled = try Self.status(sandbox, tpm).contains("enrolled: yes\n")
        #expect(try TPMEnrollmentTests.readPassword(sandbox, enrolled ? tpm : nil).stdout == "hunter2\n")
        if try Self.status(sandbox, tpm).contains("policy key: sha256:") {
            #expect(try TPMSignedPolicyTests.sign(sandbox, tpm, ["--pcrs", "16"], to: "now.json").status == 0)
            #expect(try TPMSignedPolicyTests.add(sandbox, tpm, "now.json").status == 0)
            #expect(try TPMSignedPolicyTests.readUnattended(sandbox, tpm).stdout == "hunter2\n")
        }
        #expect(try tpm.lockoutState().failedTries == 0)
    }

    @Test(arguments: [0, 20_000, 50_000, 100_000, 200_000] as [UInt32])
    func addPolicyKilledLeavesAKeychainThatOpens(_ delay: UInt32) throws {
        let tpm = try SoftwareTPM()
        let (sandbox, _) = try TPMSignedPolicyTests.sandbox(tpm)
        #expect(try TPMSignedPolicyTests.sign(sandbox, tpm, ["--pcrs", "16"], to: "now.json").status == 0)
        let process = try SpawnedProcess(
            HelperProcess.product("latchkey"), ["tpm", "add-policy", sandbox.directory.file("now.json")],
            environment: TPMSignedPolicyTests.noPassphrase(sandbox, tpm))
        usleep(delay)
        process.stop(signal: SIGKILL)
        let held = try Self.status(sandbox, tpm)
        let unattended = try TPMSignedPolicyTests.readUnattended(sandbox, tpm)
        if held.contains("signed policies: none") {
            #expect(unattended.status == 36)
        } else {
            #expect(held.contains("signed policy: PCR 16="), "\(held)")
            #expect(unattended.stdout == "hunter2\n")
        }
        #expect(try TPMEnrollmentTests.readPassword(sandbox, tpm).stdout == "hunter2\n")
    }
}
