import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `latchkey tpm enroll` and `remove` killed with SIGKILL at points across their run: the keychain is left
/// either as it was or as the command would leave it, and whichever protection it then has opens it. The
/// kill is of latchkey, never of swtpm (a TPM without an orderly shutdown counts a lockout failure).
@Suite(.dedicatedThreads) struct TPMCrashTests {
    /// Whether `tpm status` says enrolled.
    static func enrolled(_ sandbox: CLISandbox, _ tpm: SoftwareTPM) throws -> Bool {
        let status = try sandbox.run(["tpm", "status"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(status.status == 0, "\(status.stderr)")
        return status.stdout.contains("enrolled: yes\n")
    }

    /// Runs `arguments` and kills it after `delay` microseconds (it may have finished by then).
    static func killed(_ sandbox: CLISandbox, _ tpm: SoftwareTPM, _ arguments: [String], after delay: UInt32) throws {
        let process = try SpawnedProcess(
            HelperProcess.product("latchkey"), arguments, environment: TPMEnrollmentTests.environment(sandbox, tpm))
        usleep(delay)
        process.stop(signal: SIGKILL)
    }

    @Test(arguments: [0, 50_000, 150_000, 300_000, 600_000] as [UInt32])
    func enrollKilledLeavesAKeychainThatOpens(_ delay: UInt32) throws {
        let tpm = try SoftwareTPM()
        let sandbox = CLISandbox()
        try sandbox.createKeychain()
        #expect(try sandbox.run(["add-generic-password", "-s", "mail", "-a", "alice", "-w", "hunter2"]).status == 0)
        try Self.killed(sandbox, tpm, ["tpm", "enroll"], after: delay)
        if try Self.enrolled(sandbox, tpm) {
            #expect(try TPMEnrollmentTests.readPassword(sandbox, tpm).stdout == "hunter2\n")
        } else {
            #expect(try TPMEnrollmentTests.readPassword(sandbox, nil).stdout == "hunter2\n")  // No TPM needed.
        }
        #expect(try tpm.lockoutState().failedTries == 0)
    }

    @Test(arguments: [0, 50_000, 150_000, 300_000, 600_000] as [UInt32])
    func removeKilledLeavesAKeychainThatOpens(_ delay: UInt32) throws {
        let tpm = try SoftwareTPM()
        let (sandbox, code) = try TPMEnrollmentTests.enrolledSandbox(tpm)
        try Self.killed(sandbox, tpm, ["tpm", "remove"], after: delay)
        if try Self.enrolled(sandbox, tpm) {
            #expect(try TPMEnrollmentTests.readPassword(sandbox, tpm).stdout == "hunter2\n")
            let recovered = try sandbox.run(
                ["tpm", "recover", "--recovery-code-fd", "0", "--no-tpm"],
                environment: TPMEnrollmentTests.environment(sandbox, nil),
                input: Data(code.utf8))
            #expect(recovered.status == 0, "\(recovered.stderr)")
        }
        #expect(try TPMEnrollmentTests.readPassword(sandbox, nil).stdout == "hunter2\n")
        #expect(try tpm.lockoutState().failedTries == 0)
    }
}
