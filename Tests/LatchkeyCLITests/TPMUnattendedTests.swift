import Foundation
import Latchkey
import LatchkeyCLI
import LatchkeyTestSupport
import Testing

/// `latchkey tpm enroll --unattended --pcrs …`: a service's keychain opens with no passphrase while the PCRs
/// keep their values, and refuses with a clear error after a PCR extension (as a firmware or kernel update
/// makes), when the passphrase and the recovery code still open it.
@Suite(.dedicatedThreads) struct TPMUnattendedTests {
    static let refusal =
        "latchkey: find-generic-password: User interaction is not allowed. (PCR 7 changed since the unattended unlock was sealed (a firmware, boot loader or kernel update?); the TPM refused, so open the keychain with its passphrase or recovery code and enroll --unattended again)\n"

    /// A keychain with one password, enrolled unattended to `pcrs`; its recovery code.
    static func sandbox(_ tpm: SoftwareTPM, pcrs: String = "7") throws -> (CLISandbox, code: String) {
        let sandbox = CLISandbox()
        try sandbox.createKeychain()
        #expect(try sandbox.run(["add-generic-password", "-s", "mail", "-a", "alice", "-w", "hunter2"]).status == 0)
        let enrolled = try sandbox.run(
            ["tpm", "enroll", "--unattended", "--pcrs", pcrs], environment: TPMEnrollmentTests.environment(sandbox, tpm)
        )
        #expect(enrolled.status == 0, "\(enrolled.stderr)")
        #expect(enrolled.stdout.range(of: TPMEnrollmentTests.codePattern, options: .regularExpression) != nil)
        #expect(
            enrolled.stderr.hasSuffix(
                "latchkey: tpm: the keychain opens with no passphrase while PCR \(pcrs) keep their present values\n"),
            "\(enrolled.stderr)")
        return (sandbox, String(enrolled.stdout.dropFirst("recovery code: ".count).dropLast()))
    }

    static func readUnattended(_ sandbox: CLISandbox, _ tpm: SoftwareTPM) throws -> HelperProcess.Output {
        var environment = TPMEnrollmentTests.environment(sandbox, tpm)
        environment["LATCHKEY_PASSPHRASE"] = nil  // No passphrase anywhere, no terminal: a service at boot.
        return try sandbox.run(["find-generic-password", "-s", "mail", "-a", "alice", "-w"], environment: environment)
    }

    static let measurement = Data((0..<32).map { UInt8($0) })

    @Test func itOpensWithNoPassphraseUntilAPCRChanges() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, code) = try Self.sandbox(tpm)
        let read = try Self.readUnattended(sandbox, tpm)
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == "hunter2\n")
        let status = try sandbox.run(["tpm", "status"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(status.stdout.contains("enrolled: yes\nunattended: PCR 7\n"), "\(status.stdout)")

        try tpm.extendPCR(7, with: Self.measurement)  // A new boot loader was measured.
        let refused = try Self.readUnattended(sandbox, tpm)
        #expect(refused.status == 36)
        #expect(refused.stderr == Self.refusal)
        #expect(refused.stdout == "")
        #expect(try tpm.lockoutState().failedTries == 0)  // A PCR mismatch is no guess.
        #expect(try TPMEnrollmentTests.readPassword(sandbox, tpm).stdout == "hunter2\n")  // The passphrase still opens.

        // Sealing again to the new values: unattended again.
        let resealed = try sandbox.run(
            ["tpm", "enroll", "--unattended", "--pcrs", "7"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(resealed.status == 0, "\(resealed.stderr)")
        #expect(resealed.stdout == "")  // Already enrolled: the recovery code stays.
        #expect(try Self.readUnattended(sandbox, tpm).stdout == "hunter2\n")

        try tpm.extendPCR(7, with: Self.measurement)
        let recovered = try sandbox.run(
            ["tpm", "recover", "--recovery-code-fd", "0"], environment: TPMEnrollmentTests.environment(sandbox, tpm),
            input: Data(code.utf8))
        #expect(recovered.status == 0, "\(recovered.stderr)")
        let afterRecovery = try Self.readUnattended(sandbox, tpm)
        #expect(afterRecovery.status == 36)  // The recovery re-enrolls without the unattended unlock.
        #expect(
            afterRecovery.stderr.hasPrefix(
                "latchkey: find-generic-password: User interaction is not allowed. (no terminal"),
            "\(afterRecovery.stderr)")
    }

    @Test func aPCRItIsNotSealedToMayChange() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, _) = try Self.sandbox(tpm, pcrs: "7,11")
        try tpm.extendPCR(12, with: Self.measurement)
        #expect(try Self.readUnattended(sandbox, tpm).stdout == "hunter2\n")
        try tpm.extendPCR(11, with: Self.measurement)
        let refused = try Self.readUnattended(sandbox, tpm)
        #expect(refused.status == 36)
        #expect(
            refused.stderr.contains("(PCR 7,11 changed since the unattended unlock was sealed"), "\(refused.stderr)")
    }

    @Test func aPassphraseChangeKeepsItAndRemoveEndsIt() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, _) = try Self.sandbox(tpm)
        let changed = try sandbox.run(
            ["set-keychain-password", "--new-passphrase-fd", "0"],
            environment: TPMEnrollmentTests.environment(sandbox, tpm), input: Data("second\n".utf8))
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(try Self.readUnattended(sandbox, tpm).stdout == "hunter2\n")
        #expect(
            try sandbox.run(
                ["tpm", "remove"], environment: TPMEnrollmentTests.environment(sandbox, tpm, passphrase: "second")
            ).status == 0)
        #expect(try Self.readUnattended(sandbox, tpm).status == 36)
    }

    @Test(arguments: [
        ["--unattended"], ["--pcrs", "7"], ["--unattended", "--pcrs", "24"], ["--unattended", "--pcrs", "7,,8"],
        ["--unattended", "--pcrs", "x"],
    ])
    func badOptionsAreUsageErrors(_ options: [String]) throws {
        let tpm = try SoftwareTPM()
        let sandbox = CLISandbox()
        try sandbox.createKeychain()
        let output = try sandbox.run(
            ["tpm", "enroll"] + options, environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(output.status == 64)
        #expect(
            output.stderr.hasSuffix(
                "Usage: latchkey tpm enroll|status|remove|recover|sign-policy|add-policy|set-lockout-auth [options] [FILE] [keychain]\n"
            ),
            "\(output.stderr)")
        #expect(
            try sandbox.run(["tpm", "status"], environment: TPMEnrollmentTests.environment(sandbox, tpm)).stdout
                .contains("enrolled: no\n"))
    }
}
