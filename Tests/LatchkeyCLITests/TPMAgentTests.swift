import Foundation
import LatchkeyTestSupport
import Testing

/// An enrolled keychain through the agent: `unlock-keychain` starts latchkeyd, which asks the same TPM.
@Suite(.dedicatedThreads) struct TPMAgentTests {
    @Test func theAgentUnlocksAnEnrolledKeychainThroughTheTPM() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, _) = try TPMEnrollmentTests.enrolledSandbox(tpm)
        let wrong = try sandbox.run(
            ["unlock-keychain"], environment: TPMEnrollmentTests.environment(sandbox, tpm, passphrase: "wrong"))
        #expect(wrong.status == 51)
        #expect(
            wrong.stderr.contains(
                "wrong passphrase; the TPM counted the attempt against its dictionary-attack lockout (4 of 5 attempts left"
            ), "\(wrong.stderr)")
        let unlocked = try sandbox.run(["unlock-keychain"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        // The agent holds the keys now (the command line, an unregistered program, is not served its items).
        let info = try sandbox.run(["show-keychain-info"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(
            info.stdout.range(of: #"\nagent: running \(pid [0-9]+\), unlocked\n$"#, options: .regularExpression) != nil,
            "\(info.stdout)")
    }
}
