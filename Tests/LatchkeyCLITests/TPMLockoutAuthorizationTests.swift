import Foundation
import Latchkey
import LatchkeyCLI
import LatchkeyTestSupport
import Testing

/// Issue 50, point 5: the TPM's guess budget resets. While the lockout hierarchy's authValue is empty (swtpm,
/// most Linux PCs that Windows never provisioned), anyone who can run TPM commands resets the dictionary-attack
/// counter with tpm2-tools' `tpm2_dictionarylockout -c` — no passphrase, no Latchkey — and guesses go on. These
/// tests perform that attack against a swtpm of their own, and check what `tpm status`, `doctor` and enroll say
/// and do about it (docs/LATCHKEY-SECURITY.md, "The TPM").
@Suite(.dedicatedThreads) struct TPMLockoutAuthorizationTests {
    /// What `tpm status` says of an empty lockout authorization.
    static let emptyStatus =
        "lockout authorization: empty: anyone who can run TPM commands on this machine can reset its count of failed passphrase attempts, so the TPM bounds passphrase guesses only as long as nobody does (latchkey tpm set-lockout-auth sets a random one that no one keeps)\n"

    /// What enroll says after the recovery code.
    static func bound(_ tpm: SoftwareTPM) -> String {
        "latchkey: tpm: the keychain is bound to the TPM at \(tpm.tcti); write the recovery code down, it is shown only now and opens the keychain without the TPM\n"
    }

    static let setNow =
        "latchkey: tpm: the TPM's lockout authorization is set now, to a random value kept nowhere: no one can reset the count of failed attempts; a lockout then lifts only with time, or by clearing the TPM from the firmware, which destroys every key it sealed\n"

    /// A wrong passphrase the TPM checked and counted, `left` attempts remaining.
    static func counted(_ left: Int, of maxTries: Int) -> String {
        "latchkey: find-generic-password: The user name or passphrase you entered is not correct. (wrong passphrase; the TPM counted the attempt against its dictionary-attack lockout (\(left) of \(maxTries) attempts left; one is forgiven every 1000 s))\n"
    }

    static let lockedOut =
        "latchkey: find-generic-password: The user name or passphrase you entered is not correct. (the TPM is in dictionary-attack lockout after too many wrong passphrases and refuses every attempt until it lifts (in about 1000 s); the recovery code opens the keychain meanwhile (latchkey tpm recover))\n"

    /// tpm2-tools against `tpm`, as anyone who can run TPM commands on the machine would run them.
    static func tpm2(_ tool: String, _ arguments: [String], _ tpm: SoftwareTPM) throws -> HelperProcess.Output {
        try HelperProcess.run(
            "/usr/bin/" + tool, arguments + ["-T", tpm.tcti], environment: ["PATH": "/usr/bin:/bin"])
    }

    /// The attack: TPM2_DictionaryAttackLockReset with the lockout authorization `auth` (empty when nil).
    static func resetCounter(_ tpm: SoftwareTPM, auth: String? = nil) throws -> HelperProcess.Output {
        try tpm2("tpm2_dictionarylockout", ["-c"] + (auth.map { ["-p", $0] } ?? []), tpm)
    }

    /// TPMA_PERMANENT's lockoutAuthSet as tpm2-tools reads it (`tpm2_getcap properties-variable`).
    static func lockoutAuthSet(_ tpm: SoftwareTPM) throws -> Bool {
        let properties = try tpm2("tpm2_getcap", ["properties-variable"], tpm)
        #expect(properties.status == 0, "\(properties.stderr)")
        let line = properties.stdout.split(separator: "\n").first { $0.contains("lockoutAuthSet:") }
        return try #require(line).hasSuffix(" 1")
    }

    /// A sandbox with one password and its keychain, not yet enrolled.
    static func sandbox() throws -> CLISandbox {
        let sandbox = CLISandbox()
        try sandbox.createKeychain()
        let added = try sandbox.run(
            ["add-generic-password", "-s", "mail", "-a", "alice", "-w", "hunter2"], environment: sandbox.unattended)
        #expect(added.status == 0, "\(added.stderr)")
        return sandbox
    }

    /// With the lockout authorization empty, the budget of 3 wrong passphrases resets whenever the attacker
    /// says: three rounds of three guesses are all checked by the TPM, nine against a budget of three plus one
    /// per 1000 s — and `tpm status` and `doctor` say that the counter can be reset, where they used to say
    /// that every guess is counted.
    @Test func anEmptyLockoutAuthorizationLetsAnyoneResetTheGuessCounter() throws {
        let tpm = try SoftwareTPM(maxTries: 3)
        let (sandbox, _) = try TPMEnrollmentTests.enrolledSandbox(tpm)
        #expect(try !Self.lockoutAuthSet(tpm))
        var checked = 0
        for _ in 0..<3 {
            for left in [2, 1, 0] {
                let wrong = try TPMEnrollmentTests.readPassword(sandbox, tpm, passphrase: "guess \(checked)")
                #expect(wrong.status == 51)
                #expect(wrong.stderr == Self.counted(left, of: 3))
                checked += 1
            }
            #expect(try tpm.lockoutState().inLockout)
            #expect(try TPMEnrollmentTests.readPassword(sandbox, tpm).stderr == Self.lockedOut)
            let reset = try Self.resetCounter(tpm)
            #expect(reset.status == 0, "\(reset.stderr)")
            #expect(try tpm.lockoutState().failedTries == 0)
        }
        #expect(checked == 9)
        #expect(try TPMEnrollmentTests.readPassword(sandbox, tpm).stdout == "hunter2\n")

        let status = try sandbox.run(["tpm", "status"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(status.status == 0, "\(status.stderr)")
        #expect(
            status.stdout == """
                tpm: \(tpm.tcti) (present)
                enrolled: yes
                device key: sealed by the TPM
                sealed to this TPM: yes
                lockout: not locked out, 0 of 3 failed attempts counted, one forgiven every 1000 s

                """ + Self.emptyStatus)
        let doctor = try sandbox.run(
            ["doctor", "--no-unlock"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(doctor.status == 0, "\(doctor.stdout)")
        #expect(
            doctor.stdout.contains(
                """
                ok       TPM: the keychain is bound to the TPM at \(tpm.tcti); every passphrase guess is checked by the TPM
                ok       TPM lockout: not locked out, 0 of 3 failed attempts counted, one forgiven every 1000 s
                warning  TPM lockout authorization: empty: anyone who can run TPM commands on this machine can reset its count of failed passphrase attempts, so the TPM bounds passphrase guesses only as long as nobody does (tpm2_dictionarylockout -c); `latchkey tpm set-lockout-auth` sets a random one that no one keeps (a lockout then lifts only with time, or by clearing the TPM from the firmware, which destroys every key it sealed)

                """), "\(doctor.stdout)")
        #expect(!doctor.stdout.contains("every passphrase guess is counted"), "\(doctor.stdout)")
    }

    /// `tpm enroll --set-lockout-auth` gives the TPM a random lockout authorization that it keeps nowhere: the
    /// same reset is refused by the TPM, and the budget stays three (the recovery code still opens the keychain).
    @Test func aLockoutAuthorizationSetAtEnrolmentStopsTheReset() throws {
        let tpm = try SoftwareTPM(maxTries: 3)
        let sandbox = try Self.sandbox()
        let enrolled = try sandbox.run(
            ["tpm", "enroll", "--set-lockout-auth"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(enrolled.status == 0, "\(enrolled.stderr)")
        // The recovery code is all it prints: the lockout authorization appears nowhere.
        #expect(
            enrolled.stdout.range(of: TPMEnrollmentTests.codePattern, options: .regularExpression) != nil,
            "\(enrolled.stdout)")
        #expect(enrolled.stderr == Self.bound(tpm) + Self.setNow)
        #expect(try Self.lockoutAuthSet(tpm))
        let code = String(enrolled.stdout.dropFirst("recovery code: ".count).dropLast())

        for left in [2, 1, 0] {
            let wrong = try TPMEnrollmentTests.readPassword(sandbox, tpm, passphrase: "guess \(left)")
            #expect(wrong.stderr == Self.counted(left, of: 3))
        }
        let reset = try Self.resetCounter(tpm)
        #expect(reset.status != 0, "\(reset.stdout)")
        #expect(reset.stderr.contains("authorization HMAC check failed"), "\(reset.stderr)")
        let state = try tpm.lockoutState()
        #expect(state.inLockout)
        #expect(state.failedTries == 3)
        // No more guesses are checked: every attempt, the right passphrase too, meets the lockout.
        for passphrase in ["guess 4", CLISandbox.passphrase] {
            #expect(try TPMEnrollmentTests.readPassword(sandbox, tpm, passphrase: passphrase).stderr == Self.lockedOut)
        }

        let status = try sandbox.run(["tpm", "status"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(
            status.stdout.hasSuffix(
                """
                lockout: locked out, 3 of 3 failed attempts counted, one forgiven every 1000 s
                lockout authorization: set: only whoever holds it can reset the count of failed attempts

                """), "\(status.stdout)")
        let doctor = try sandbox.run(
            ["doctor", "--no-unlock"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(
            doctor.stdout.contains(
                "ok       TPM: the keychain is bound to the TPM at \(tpm.tcti); every passphrase guess is counted by the TPM, and only whoever holds its lockout authorization can reset the count\n"
            ), "\(doctor.stdout)")
        #expect(!doctor.stdout.contains("TPM lockout authorization"), "\(doctor.stdout)")

        let recovered = try sandbox.run(
            ["tpm", "recover", "--recovery-code-fd", "0", "--no-tpm"],
            environment: TPMEnrollmentTests.environment(sandbox, tpm), input: Data(code.utf8))
        #expect(recovered.status == 0, "\(recovered.stderr)")
        #expect(try TPMEnrollmentTests.readPassword(sandbox, nil).stdout == "hunter2\n")
    }

    /// A lockout authorization someone else set (an administrator, with tpm2_changeauth) is theirs: enroll
    /// leaves it as it is, says so, and the administrator's still resets the counter.
    @Test func enrollLeavesALockoutAuthorizationSomeoneElseSetAlone() throws {
        let tpm = try SoftwareTPM(maxTries: 3)
        let changed = try Self.tpm2("tpm2_changeauth", ["-c", "lockout", "administrator's secret"], tpm)
        #expect(changed.status == 0, "\(changed.stderr)")
        let sandbox = try Self.sandbox()
        let enrolled = try sandbox.run(
            ["tpm", "enroll", "--set-lockout-auth"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(enrolled.status == 0, "\(enrolled.stderr)")
        #expect(
            enrolled.stderr
                == Self.bound(tpm)
                + "latchkey: tpm: the TPM's lockout authorization was already set; Latchkey left it as it is: only whoever holds it can reset the count of failed attempts\n"
        )
        let status = try sandbox.run(["tpm", "status"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(
            status.stdout.hasSuffix(
                "lockout authorization: set: only whoever holds it can reset the count of failed attempts\n"),
            "\(status.stdout)")
        let wrong = try TPMEnrollmentTests.readPassword(sandbox, tpm, passphrase: "wrong")
        #expect(wrong.stderr == Self.counted(2, of: 3))
        let reset = try Self.resetCounter(tpm, auth: "administrator's secret")
        #expect(reset.status == 0, "\(reset.stderr)")
        #expect(try tpm.lockoutState().failedTries == 0)
        #expect(try TPMEnrollmentTests.readPassword(sandbox, tpm).stdout == "hunter2\n")
    }

    /// A TPM that refuses the change (its lockout hierarchy locked after a wrong lockout authorization) fails
    /// the enrolment with the TPM's error: the keychain is as it was (its passphrase alone opens it), and so is
    /// the TPM's lockout authorization.
    @Test func aTPMThatRefusesToSetItLeavesTheKeychainAsItWas() throws {
        let tpm = try SoftwareTPM(maxTries: 3)
        #expect(try Self.resetCounter(tpm, auth: "a wrong lockout authorization").status != 0)
        let sandbox = try Self.sandbox()
        let enrolled = try sandbox.run(
            ["tpm", "enroll", "--set-lockout-auth"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(enrolled.status == 51)
        #expect(enrolled.stdout == "")
        #expect(
            enrolled.stderr
                == "latchkey: tpm: The user name or passphrase you entered is not correct. (the TPM refused to set a lockout authorization (setting the lockout authorization: tpm:warn(2.0): authorizations for objects subject to DA protection are not allowed at this time because the TPM is in DA lockout mode); its lockout authorization and the keychain are as they were)\n"
        )
        #expect(try !Self.lockoutAuthSet(tpm))
        let status = try sandbox.run(["tpm", "status"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(status.stdout.contains("enrolled: no\n"), "\(status.stdout)")
        #expect(try TPMEnrollmentTests.readPassword(sandbox, nil).stdout == "hunter2\n")  // No TPM needed.
    }

    /// `tpm set-lockout-auth` does the same for a keychain enrolled before (and needs no keychain): the reset
    /// is refused from then on; run again, it leaves the authorization it set as it is.
    @Test func setLockoutAuthHardensAnEarlierEnrolment() throws {
        let tpm = try SoftwareTPM(maxTries: 3)
        let (sandbox, _) = try TPMEnrollmentTests.enrolledSandbox(tpm)
        let set = try sandbox.run(
            ["tpm", "set-lockout-auth"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout == "")
        #expect(set.stderr == Self.setNow)
        let wrong = try TPMEnrollmentTests.readPassword(sandbox, tpm, passphrase: "wrong")
        #expect(wrong.stderr == Self.counted(2, of: 3))
        #expect(try Self.resetCounter(tpm).status != 0)
        #expect(try tpm.lockoutState().failedTries == 1)
        let again = try sandbox.run(
            ["tpm", "set-lockout-auth"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            again.stderr
                == "latchkey: tpm: the TPM's lockout authorization was already set; Latchkey left it as it is: only whoever holds it can reset the count of failed attempts\n"
        )
        let extra = try sandbox.run(
            ["tpm", "set-lockout-auth", "login"], environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(extra.status == 64)
        #expect(
            extra.stderr.hasPrefix(
                "latchkey: tpm: tpm set-lockout-auth takes no keychain: the authorization is the TPM's"),
            "\(extra.stderr)")
    }

    @Test func settingAndLeavingItTogetherIsAUsageError() throws {
        let sandbox = try Self.sandbox()
        let output = try sandbox.run(
            ["tpm", "enroll", "--set-lockout-auth", "--leave-lockout-auth"],
            environment: TPMEnrollmentTests.environment(sandbox, nil))
        #expect(output.status == 64)
        #expect(
            output.stderr.hasPrefix(
                "latchkey: tpm: --set-lockout-auth and --leave-lockout-auth cannot go together\n"),
            "\(output.stderr)")
    }

    /// On a terminal enroll asks, when the TPM's lockout authorization is empty; the answer decides (no answer:
    /// no). --leave-lockout-auth does not ask.
    @Test func enrollAsksOnATerminal() throws {
        for (answer, authSet) in [("", false), ("y", true)] {
            let tpm = try SoftwareTPM(maxTries: 3)
            let sandbox = try Self.sandbox()
            let enroll = try PseudoTerminalSession(
                executable: sandbox.binary, arguments: ["tpm", "enroll"],
                environment: TPMEnrollmentTests.environment(sandbox, tpm))
            #expect(
                enroll.expect(
                    "latchkey: tpm: the TPM's lockout authorization is empty: anyone who can run TPM commands on this machine can reset its count of failed passphrase attempts, so the TPM bounds passphrase guesses only as long as nobody does. Set a random one that no one keeps (a lockout then lifts only with time, or by clearing the TPM from the firmware, which destroys every key it sealed)? [y/N] "
                ), "\(enroll.transcript)")
            enroll.send(answer)
            #expect(enroll.wait() == 0, "\(enroll.transcript)")
            #expect(try Self.lockoutAuthSet(tpm) == authSet)
            #expect(
                enroll.transcript.contains(
                    authSet ? "lockout authorization is set now" : "warning: the TPM's lockout authorization is empty"),
                "\(enroll.transcript)")
        }
        // --leave-lockout-auth: no question, the authorization as it was, and the warning.
        let tpm = try SoftwareTPM(maxTries: 3)
        let sandbox = try Self.sandbox()
        let leave = try PseudoTerminalSession(
            executable: sandbox.binary, arguments: ["tpm", "enroll", "--leave-lockout-auth"],
            environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(leave.wait() == 0, "\(leave.transcript)")
        #expect(!leave.transcript.contains("[y/N]"), "\(leave.transcript)")
        #expect(leave.transcript.contains("warning: the TPM's lockout authorization is empty"), "\(leave.transcript)")
        #expect(try !Self.lockoutAuthSet(tpm))
    }
}
