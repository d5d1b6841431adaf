import Foundation
import Latchkey
import LatchkeyCLI
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `latchkey tpm enroll | status | remove | recover` against a swtpm of each test's own.
@Suite(.dedicatedThreads) struct TPMEnrollmentTests {
    static let codePattern = #"^recovery code: [a-z2-9]{4}(-[a-z2-9]{4}){7}\n$"#

    /// A sandbox whose `latchkey` uses `tpm`, with a keychain holding one password.
    static func enrolledSandbox(_ tpm: SoftwareTPM) throws -> (CLISandbox, code: String) {
        let sandbox = CLISandbox()
        try sandbox.createKeychain()
        let added = try sandbox.run(
            ["add-generic-password", "-s", "mail", "-a", "alice", "-w", "hunter2"], environment: sandbox.unattended)
        #expect(added.status == 0, "\(added.stderr)")
        let enrolled = try sandbox.run(
            ["tpm", "enroll"], environment: sandbox.unattended.merging(tpm.environment) { _, new in new })
        #expect(enrolled.status == 0, "\(enrolled.stderr)")
        #expect(enrolled.stdout.range(of: codePattern, options: .regularExpression) != nil, "\(enrolled.stdout)")
        #expect(
            enrolled.stderr
                == "latchkey: tpm: the keychain is bound to the TPM at \(tpm.tcti); write the recovery code down, it is shown only now and opens the keychain without the TPM\n"
                + "latchkey: tpm: warning: the TPM's lockout authorization is empty: anyone who can run TPM commands on this machine can reset its count of failed passphrase attempts, so the TPM bounds passphrase guesses only as long as nobody does; latchkey tpm set-lockout-auth sets a random one that no one keeps\n"
        )
        let code = String(enrolled.stdout.dropFirst("recovery code: ".count).dropLast())
        return (sandbox, code)
    }

    static func environment(_ sandbox: CLISandbox, _ tpm: SoftwareTPM?, passphrase: String = CLISandbox.passphrase)
        -> [String: String]
    {
        var environment = sandbox.environment
        environment["LATCHKEY_PASSPHRASE"] = passphrase
        environment["LATCHKEY_TPM_TCTI"] = tpm?.tcti ?? "swtpm:host=127.0.0.1,port=9"
        return environment
    }

    static func readPassword(_ sandbox: CLISandbox, _ tpm: SoftwareTPM?, passphrase: String = CLISandbox.passphrase)
        throws -> HelperProcess.Output
    {
        try sandbox.run(
            ["find-generic-password", "-s", "mail", "-a", "alice", "-w"],
            environment: environment(sandbox, tpm, passphrase: passphrase))
    }

    @Test func anEnrolledKeychainOpensWithThePassphraseAndTheTPM() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, _) = try Self.enrolledSandbox(tpm)
        let read = try Self.readPassword(sandbox, tpm)
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == "hunter2\n")
        let status = try sandbox.run(["tpm", "status"], environment: Self.environment(sandbox, tpm))
        #expect(status.status == 0, "\(status.stderr)")
        #expect(
            status.stdout == """
                tpm: \(tpm.tcti) (present)
                enrolled: yes
                device key: sealed by the TPM
                sealed to this TPM: yes
                lockout: not locked out, 0 of 5 failed attempts counted, one forgiven every 1000 s

                """ + TPMLockoutAuthorizationTests.emptyStatus)
    }

    @Test func anEnrolledKeychainDoesNotOpenWithoutTheTPM() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, _) = try Self.enrolledSandbox(tpm)
        tpm.stop()
        let read = try Self.readPassword(sandbox, tpm)
        #expect(read.status == LatchkeyCommandLine.exitStatus(for: .notAvailable))
        #expect(
            read.stderr.hasPrefix(
                "latchkey: find-generic-password: No keychain is available. (no TPM answers at \(tpm.tcti) (connecting to \(tpm.tcti): "
            ), "\(read.stderr)")
        #expect(
            read.stderr.hasSuffix(
                "); this keychain is bound to a TPM: set LATCHKEY_TPM_TCTI, or open it with its recovery code (latchkey tpm recover))\n"
            ), "\(read.stderr)")
    }

    @Test func wrongPassphrasesCountTowardTheLockoutUntilItRefusesEvenTheRightOne() throws {
        let tpm = try SoftwareTPM(maxTries: 3)
        let (sandbox, code) = try Self.enrolledSandbox(tpm)
        for left in [2, 1, 0] {
            let wrong = try Self.readPassword(sandbox, tpm, passphrase: "wrong guess")
            #expect(wrong.status == 51)
            #expect(
                wrong.stderr
                    == "latchkey: find-generic-password: The user name or passphrase you entered is not correct. (wrong passphrase; the TPM counted the attempt against its dictionary-attack lockout (\(left) of 3 attempts left; one is forgiven every 1000 s))\n"
            )
        }
        #expect(try tpm.lockoutState().inLockout)
        let right = try Self.readPassword(sandbox, tpm)
        #expect(right.status == 51)
        #expect(
            right.stderr
                == "latchkey: find-generic-password: The user name or passphrase you entered is not correct. (the TPM is in dictionary-attack lockout after too many wrong passphrases and refuses every attempt until it lifts (in about 1000 s); the recovery code opens the keychain meanwhile (latchkey tpm recover))\n"
        )
        // The recovery code needs no TPM: it opens the keychain, which is then bound again (here to the same
        // TPM, whose lockout refuses only DA-protected objects' authorizations, not sealing).
        let recovered = try sandbox.run(
            ["tpm", "recover", "--recovery-code-fd", "0", "--no-tpm"], environment: Self.environment(sandbox, tpm),
            input: Data(code.utf8))
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(recovered.stdout == "")
        let read = try Self.readPassword(sandbox, nil)
        #expect(read.stdout == "hunter2\n")
    }

    @Test func aCopyOnAnotherMachineOpensOnlyWithTheRecoveryCode() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, code) = try Self.enrolledSandbox(tpm)
        let other = try SoftwareTPM()
        let elsewhere = CLISandbox()
        let copy = try HelperProcess.run(
            "/bin/cp", ["-a", sandbox.directory.path + "/data", elsewhere.directory.path + "/data"])
        #expect(copy.status == 0, "\(copy.stderr)")
        let read = try Self.readPassword(elsewhere, other)
        #expect(read.status == LatchkeyCommandLine.exitStatus(for: .notAvailable))
        #expect(
            read.stderr
                == "latchkey: find-generic-password: No keychain is available. (the TPM at \(other.tcti) is not the one this keychain is sealed to (another machine, or this TPM was cleared); its recovery code opens it (latchkey tpm recover))\n"
        )
        #expect(try other.lockoutState().failedTries == 0)  // Refused before any guess reached the TPM.
        let wrongCode = try elsewhere.run(
            ["tpm", "recover", "--recovery-code-fd", "0"], environment: Self.environment(elsewhere, other),
            input: Data("aaaa-aaaa-aaaa-aaaa-aaaa-aaaa-aaaa-aaaa".utf8))
        #expect(wrongCode.status == 51)
        #expect(
            wrongCode.stderr
                == "latchkey: tpm: The user name or passphrase you entered is not correct. (the recovery code is not this keychain's)\n"
        )
        let recovered = try elsewhere.run(
            ["tpm", "recover", "--recovery-code-fd", "0"], environment: Self.environment(elsewhere, other),
            input: Data(code.uppercased().utf8))
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(recovered.stdout.range(of: Self.codePattern, options: .regularExpression) != nil)
        #expect(recovered.stdout != "recovery code: \(code)\n")
        #expect(try Self.readPassword(elsewhere, other).stdout == "hunter2\n")
        // The original, still on its own TPM, is untouched.
        #expect(try Self.readPassword(sandbox, tpm).stdout == "hunter2\n")
    }

    @Test func afterATPMClearTheRecoveryCodeReopensAndReseals() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, code) = try Self.enrolledSandbox(tpm)
        try tpm.clear()
        #expect(try Self.readPassword(sandbox, tpm).status == LatchkeyCommandLine.exitStatus(for: .notAvailable))
        let status = try sandbox.run(["tpm", "status"], environment: Self.environment(sandbox, tpm))
        #expect(
            status.stdout.contains(
                "sealed to this TPM: no (another TPM, or this one after a clear: use tpm recover)\n"),
            "\(status.stdout)")
        let recovered = try sandbox.run(
            ["tpm", "recover", "--recovery-code-fd", "0"],
            environment: Self.environment(sandbox, tpm, passphrase: "a new passphrase"), input: Data(code.utf8))
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(
            recovered.stderr
                == "latchkey: tpm: the keychain is bound to the TPM at \(tpm.tcti) again; the old recovery code is void, write the new one down\n"
        )
        #expect(try Self.readPassword(sandbox, tpm, passphrase: "a new passphrase").stdout == "hunter2\n")
        #expect(try Self.readPassword(sandbox, tpm).status == 51)
    }

    @Test func removeLeavesThePassphraseAlone() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, code) = try Self.enrolledSandbox(tpm)
        let wrong = try sandbox.run(
            ["tpm", "remove"], environment: Self.environment(sandbox, tpm, passphrase: "wrong guess"))
        #expect(wrong.status == 51)
        let removed = try sandbox.run(["tpm", "remove"], environment: Self.environment(sandbox, tpm))
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(
            removed.stderr
                == "latchkey: tpm: the keychain is no longer bound to a TPM; its passphrase alone opens it and the recovery code is void\n"
        )
        tpm.stop()
        #expect(try Self.readPassword(sandbox, nil).stdout == "hunter2\n")
        let again = try sandbox.run(["tpm", "remove"], environment: Self.environment(sandbox, nil))
        #expect(again.status == LatchkeyCommandLine.exitStatus(for: .itemNotFound))
        #expect(
            again.stderr
                == "latchkey: tpm: The specified item could not be found in the keychain. (the keychain is not bound to a TPM)\n"
        )
        let recover = try sandbox.run(
            ["tpm", "recover", "--recovery-code-fd", "0"], environment: Self.environment(sandbox, nil),
            input: Data(code.utf8))
        #expect(recover.status == LatchkeyCommandLine.exitStatus(for: .itemNotFound))
    }

    @Test func enrollingTwiceAndAWrongPassphraseAreRefused() throws {
        let tpm = try SoftwareTPM()
        let sandbox = CLISandbox()
        try sandbox.createKeychain()
        let wrong = try sandbox.run(
            ["tpm", "enroll"], environment: Self.environment(sandbox, tpm, passphrase: "wrong guess"))
        #expect(wrong.status == 51)
        #expect(wrong.stdout == "")
        #expect(wrong.stderr == "latchkey: tpm: The user name or passphrase you entered is not correct.\n")
        #expect(try sandbox.run(["tpm", "enroll"], environment: Self.environment(sandbox, tpm)).status == 0)
        let twice = try sandbox.run(["tpm", "enroll"], environment: Self.environment(sandbox, tpm))
        #expect(twice.status == LatchkeyCommandLine.exitStatus(for: .duplicateItem))
        #expect(
            twice.stderr
                == "latchkey: tpm: The specified item already exists in the keychain. (the keychain is already bound to a TPM (latchkey tpm remove undoes it))\n"
        )
    }

    @Test func thePassphraseOfAnEnrolledKeychainChangesAndTheRecoveryCodeStays() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, code) = try Self.enrolledSandbox(tpm)
        let changed = try sandbox.run(
            ["set-keychain-password", "--new-passphrase-fd", "0"], environment: Self.environment(sandbox, tpm),
            input: Data("second passphrase\n".utf8))
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(try Self.readPassword(sandbox, tpm, passphrase: "second passphrase").stdout == "hunter2\n")
        #expect(try Self.readPassword(sandbox, tpm).status == 51)
        let recovered = try sandbox.run(
            ["tpm", "recover", "--recovery-code-fd", "0", "--no-tpm"],
            environment: Self.environment(sandbox, tpm, passphrase: "third"), input: Data(code.utf8))
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(try Self.readPassword(sandbox, nil, passphrase: "third").stdout == "hunter2\n")
    }

    @Test func aKeychainNeverEnrolledReportsItsTPM() throws {
        let tpm = try SoftwareTPM()
        let sandbox = CLISandbox()
        try sandbox.createKeychain()
        let status = try sandbox.run(["tpm", "status"], environment: Self.environment(sandbox, tpm))
        #expect(
            status.stdout
                == "tpm: \(tpm.tcti) (present)\nenrolled: no\nlockout: not locked out, 0 of 5 failed attempts counted, one forgiven every 1000 s\n"
                + TPMLockoutAuthorizationTests.emptyStatus
        )
        let none = try sandbox.run(["tpm", "status"], environment: Self.environment(sandbox, nil))
        #expect(none.status == 0)
        #expect(
            none.stdout.hasPrefix(
                "tpm: swtpm:host=127.0.0.1,port=9 (absent: no TPM answers at swtpm:host=127.0.0.1,port=9 (connecting to swtpm:host=127.0.0.1,port=9: "
            ), "\(none.stdout)")
        #expect(none.stdout.hasSuffix("))\nenrolled: no\n"), "\(none.stdout)")
        let bad = try sandbox.run(["tpm", "frobnicate"], environment: Self.environment(sandbox, tpm))
        #expect(bad.status == 64)
    }
}
