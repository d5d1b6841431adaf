import Foundation
import Latchkey
import LatchkeyCLI
import LatchkeyTestSupport
import Testing

/// The command line says where the keys the keychain holds live: `ssh-key list` marks an ECDSA key made
/// inside the TPM `origin=made-in-tpm`, and `doctor` counts the keys in the TPM and in software.
@Suite(.dedicatedThreads) struct TPMKeyReportingTests {
    @Test func sshKeyListAndDoctorSayWhereTheKeysLive() throws {
        let tpm = try SoftwareTPM()
        let sandbox = CLISandbox()
        try sandbox.createKeychain()
        let withTPM = TPMEnrollmentTests.environment(sandbox, tpm)
        let withoutTPM = TPMEnrollmentTests.environment(sandbox, nil)
        let made = try sandbox.run(["ssh-key", "create", "laptop"], environment: withTPM)
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.hasPrefix("ecdsa-sha2-nistp256 "), "\(made.stdout)")
        let software = try sandbox.run(["ssh-key", "create", "desktop"], environment: withoutTPM)
        #expect(software.status == 0, "\(software.stderr)")

        let list = try sandbox.run(["ssh-key", "list"], environment: withTPM)
        #expect(list.status == 0, "\(list.stderr)")
        let lines = list.stdout.split(separator: "\n").map(String.init).sorted()
        #expect(lines.count == 2)
        #expect(
            lines.contains { $0.hasSuffix(" laptop (ECDSA) origin=made-in-tpm confirm=no programs=any") }, "\(lines)")
        #expect(
            lines.contains { $0.hasSuffix(" desktop (ECDSA) origin=made-in-keychain confirm=no programs=any") },
            "\(lines)")

        let doctor = try sandbox.run(["doctor"], environment: withTPM)
        #expect(
            doctor.stdout.contains(
                "ok       keys the keychain holds: 1 key made inside the TPM (never out of it), 1 key held in software (in memory where the keychain runs)\n"
            ), "\(doctor.stdout)")
    }

    @Test func doctorSaysNothingOfKeysWhenThereAreNone() throws {
        let sandbox = CLISandbox()
        try sandbox.createKeychain()
        let doctor = try sandbox.run(["doctor"], environment: sandbox.unattended)
        #expect(doctor.status == 0, "\(doctor.stdout)")
        #expect(!doctor.stdout.contains("keys the keychain holds"))
    }
}
