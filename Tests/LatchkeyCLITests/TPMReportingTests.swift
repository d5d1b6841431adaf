import Foundation
import Latchkey
import LatchkeyCLI
import LatchkeyTestSupport
import Testing

/// doctor and show-keychain-info show the TPM binding: present, enrolled, the one sealed to, lockout.
@Suite(.dedicatedThreads) struct TPMReportingTests {
    @Test func doctorShowsAnEnrolledKeychainsTPMAndItsLockout() throws {
        let tpm = try SoftwareTPM(maxTries: 2)
        let (sandbox, _) = try TPMEnrollmentTests.enrolledSandbox(tpm)
        let doctor = try sandbox.run(
            ["doctor", "--no-unlock"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(doctor.status == 0, "\(doctor.stdout)")
        #expect(
            doctor.stdout.contains(
                """
                ok       TPM: the keychain is bound to the TPM at \(tpm.tcti); every passphrase guess is checked by the TPM
                ok       TPM lockout: not locked out, 0 of 2 failed attempts counted, one forgiven every 1000 s
                warning  TPM lockout authorization: empty: anyone who can run TPM commands on this machine can reset its count of failed passphrase attempts, so the TPM bounds passphrase guesses only as long as nobody does (tpm2_dictionarylockout -c); `latchkey tpm set-lockout-auth` sets a random one that no one keeps (a lockout then lifts only with time, or by clearing the TPM from the firmware, which destroys every key it sealed)
                ok       device key sealed by the TPM: items readable at any time open without the passphrase, on this machine only

                """), "\(doctor.stdout)")
        for _ in 0..<2 { #expect(try TPMEnrollmentTests.readPassword(sandbox, tpm, passphrase: "wrong").status == 51) }
        let locked = try sandbox.run(
            ["doctor", "--no-unlock"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(locked.status == 1)
        #expect(
            locked.stdout.contains(
                "error    TPM lockout: locked out (2 of 2 failed attempts counted, one forgiven every 1000 s); no passphrase opens the keychain until it lifts, in about 1000 s; the recovery code opens it meanwhile\n"
            ), "\(locked.stdout)")
        tpm.stop()
        let absent = try sandbox.run(
            ["doctor", "--no-unlock"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(absent.status == 1)
        #expect(
            absent.stdout.contains(
                "error    TPM: the keychain is bound to a TPM, but none answers at \(tpm.tcti) (no TPM answers at \(tpm.tcti) (connecting to "
            ), "\(absent.stdout)")
        #expect(
            absent.stdout.contains(
                "warning  the device key sealed by the TPM cannot be had now: items readable at any time open only after an unlock\n"
            ), "\(absent.stdout)")
    }

    @Test func doctorNamesAnotherMachinesTPM() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, _) = try TPMEnrollmentTests.enrolledSandbox(tpm)
        let other = try SoftwareTPM()
        let doctor = try sandbox.run(
            ["doctor", "--no-unlock"], environment: TPMEnrollmentTests.environment(sandbox, other))
        #expect(doctor.status == 1)
        #expect(
            doctor.stdout.contains(
                "error    TPM: the TPM at \(other.tcti) is not the one the keychain is sealed to (another machine, or this TPM was cleared); `latchkey tpm recover` opens it with its recovery code and binds it to this one\n"
            ), "\(doctor.stdout)")
    }

    @Test func showKeychainInfoShowsTheBinding() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, _) = try TPMEnrollmentTests.enrolledSandbox(tpm)
        let info = try sandbox.run(["show-keychain-info"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(info.status == 0, "\(info.stderr)")
        #expect(
            info.stdout == """
                path: \(sandbox.defaultKeychain)
                format: 6 (this Latchkey reads up to 6)
                key derivation: Argon2id, 19 MiB, 2 passes
                items: 1
                device key: sealed by the TPM
                tpm: enrolled, \(tpm.tcti), lockout: not locked out, 0 of 5 failed attempts
                agent: not running

                """)
        tpm.stop()
        let absent = try sandbox.run(["show-keychain-info"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(
            absent.stdout.contains(
                "device key: sealed by a TPM that cannot be used now (always-available items open after the first unlock)\ntpm: enrolled, \(tpm.tcti) (absent: no TPM answers at "
            ), "\(absent.stdout)")
    }
}
