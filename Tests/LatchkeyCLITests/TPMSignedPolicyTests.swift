import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// `latchkey tpm enroll --unattended --pcrs … --policy-key PUBLIC.pem`, `tpm sign-policy` and `tpm add-policy`:
/// the unattended unlock opens while the PCRs hold values the policy key's owner signed, so an update whose
/// measurements were signed before it was booted needs no recovery (TPM2_PolicyAuthorize, on swtpm).
@Suite(.dedicatedThreads) struct TPMSignedPolicyTests {
    static let measurement = Data((0..<32).map { UInt8($0) })

    /// A P-256 key pair made by openssl in the sandbox: `<name>.pem` (private) and `<name>.pub.pem`; the
    /// public key's fingerprint as `openssl dgst -sha256` prints it for the DER SubjectPublicKeyInfo.
    static func keyPair(_ sandbox: CLISandbox, _ name: String) throws -> String {
        let directory = sandbox.directory
        let openssl = "/usr/bin/openssl"
        for arguments in [
            ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", directory.file("\(name).pem")],
            ["ec", "-in", directory.file("\(name).pem"), "-pubout", "-out", directory.file("\(name).pub.pem")],
            [
                "pkey", "-pubin", "-in", directory.file("\(name).pub.pem"), "-outform", "DER", "-out",
                directory.file("\(name).der"),
            ],
        ] {
            let made = try HelperProcess.run(openssl, arguments)
            #expect(made.status == 0, "\(made.stderr)")
        }
        let digest = try HelperProcess.run(openssl, ["dgst", "-sha256", "-r", directory.file("\(name).der")])
        return String(digest.stdout.prefix(64))
    }

    /// A keychain with one password, enrolled unattended to PCR 16 under `signer`'s policies.
    static func sandbox(_ tpm: SoftwareTPM) throws -> (CLISandbox, fingerprint: String) {
        let sandbox = CLISandbox()
        try sandbox.createKeychain()
        #expect(try sandbox.run(["add-generic-password", "-s", "mail", "-a", "alice", "-w", "hunter2"]).status == 0)
        let fingerprint = try keyPair(sandbox, "signer")
        let enrolled = try sandbox.run(
            [
                "tpm", "enroll", "--unattended", "--pcrs", "16", "--policy-key",
                sandbox.directory.file("signer.pub.pem"),
            ],
            environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(enrolled.status == 0, "\(enrolled.stderr)")
        #expect(enrolled.stdout.range(of: TPMEnrollmentTests.codePattern, options: .regularExpression) != nil)
        #expect(
            enrolled.stderr.hasSuffix(
                "latchkey: tpm: the keychain opens with no passphrase while PCR 16 hold values a policy signed by sha256:\(fingerprint) approves (latchkey tpm add-policy)\n"
            ), "\(enrolled.stderr)")
        return (sandbox, fingerprint)
    }

    /// The environment of a service at boot: the TPM, no passphrase anywhere, no terminal.
    static func noPassphrase(_ sandbox: CLISandbox, _ tpm: SoftwareTPM) -> [String: String] {
        var environment = TPMEnrollmentTests.environment(sandbox, tpm)
        environment["LATCHKEY_PASSPHRASE"] = nil
        return environment
    }

    static func readUnattended(_ sandbox: CLISandbox, _ tpm: SoftwareTPM) throws -> HelperProcess.Output {
        try sandbox.run(
            ["find-generic-password", "-s", "mail", "-a", "alice", "-w"], environment: noPassphrase(sandbox, tpm))
    }

    static func sign(
        _ sandbox: CLISandbox, _ tpm: SoftwareTPM, key: String = "signer", _ options: [String], to file: String
    )
        throws -> HelperProcess.Output
    {
        try sandbox.run(
            ["tpm", "sign-policy", "--key", sandbox.directory.file("\(key).pem")] + options + [
                "--output", sandbox.directory.file(file),
            ], environment: noPassphrase(sandbox, tpm))
    }

    static func add(_ sandbox: CLISandbox, _ tpm: SoftwareTPM, _ file: String) throws -> HelperProcess.Output {
        try sandbox.run(["tpm", "add-policy", sandbox.directory.file(file)], environment: noPassphrase(sandbox, tpm))
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }

    /// PCR 16's value after extending `value` with `measurement`: SHA-256(value ‖ measurement).
    static func extended(_ value: Data, with measurement: Data) -> Data {
        MessageDigest.sha256.hash(value + measurement)
    }

    static let zero = Data(repeating: 0, count: 32)

    @Test func aSignedPolicyOpensItAndAnUpdateSignedAheadNeedsNoRecovery() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, fingerprint) = try Self.sandbox(tpm)

        // Enrolled, but no policy signed yet: refused, the passphrase opens.
        let none = try Self.readUnattended(sandbox, tpm)
        #expect(none.status == 36)
        #expect(
            none.stderr
                == "latchkey: find-generic-password: User interaction is not allowed. (the unattended unlock needs a signed policy for PCR 16 and the keychain holds none yet; add one (latchkey tpm add-policy FILE), or open the keychain with its passphrase or recovery code)\n"
        )
        #expect(try TPMEnrollmentTests.readPassword(sandbox, tpm).stdout == "hunter2\n")

        // The signer signs PCR 16 as it is now (read from the TPM); the keychain takes it with no passphrase.
        let signed = try Self.sign(sandbox, tpm, ["--pcrs", "16"], to: "now.json")
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(
            signed.stderr
                == "latchkey: tpm: wrote a policy signed for PCR 16=\(Self.hex(Self.zero)) to \(sandbox.directory.file("now.json"))\n"
        )
        let file = try String(contentsOfFile: sandbox.directory.file("now.json"), encoding: .utf8)
        #expect(
            file.hasPrefix(
                "{\n  \"format\" : \"latchkey-tpm-pcr-policy/1\",\n  \"key\" : \"sha256:\(fingerprint)\",\n"), "\(file)"
        )
        let added = try Self.add(sandbox, tpm, "now.json")
        #expect(added.status == 0, "\(added.stderr)")
        #expect(
            added.stderr == "latchkey: tpm: the keychain opens with no passphrase while PCR 16=\(Self.hex(Self.zero))\n"
        )
        let read = try Self.readUnattended(sandbox, tpm)
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == "hunter2\n")

        // A firmware update is coming: the signer predicts PCR 16's next value and signs it before the reboot.
        let next = Self.extended(Self.zero, with: Self.measurement)
        let predicted = try Self.sign(
            sandbox, tpm, ["--pcrs", "16", "--pcr", "16=\(Self.hex(next).uppercased())"], to: "next.json")
        #expect(predicted.status == 0, "\(predicted.stderr)")
        #expect(try Self.add(sandbox, tpm, "next.json").status == 0)
        let status = try sandbox.run(["tpm", "status"], environment: Self.noPassphrase(sandbox, tpm))
        #expect(
            status.stdout.contains(
                "unattended: PCR 16\npolicy key: sha256:\(fingerprint)\nsigned policy: PCR 16=\(Self.hex(Self.zero)) (the PCRs now)\nsigned policy: PCR 16=\(Self.hex(next)) (not the PCRs now)\n"
            ), "\(status.stdout)")

        try tpm.extendPCR(16, with: Self.measurement)  // The update is booted and measured.
        let afterUpdate = try Self.readUnattended(sandbox, tpm)
        #expect(afterUpdate.status == 0, "\(afterUpdate.stderr)")
        #expect(afterUpdate.stdout == "hunter2\n")

        // An update no one signed for: refused with the PCR named; not a guess; the passphrase still opens.
        try tpm.extendPCR(16, with: Self.measurement)
        let refused = try Self.readUnattended(sandbox, tpm)
        #expect(refused.status == 36)
        #expect(
            refused.stderr
                == "latchkey: find-generic-password: User interaction is not allowed. (PCR 16 changed and none of the 2 signed policies the keychain holds approves the values now (a firmware, boot loader or kernel update no policy was signed for?); open the keychain with its passphrase or recovery code, or add a policy signed for the new values (latchkey tpm add-policy FILE))\n"
        )
        #expect(refused.stdout == "")
        #expect(try tpm.lockoutState().failedTries == 0)
        #expect(try TPMEnrollmentTests.readPassword(sandbox, tpm).stdout == "hunter2\n")

        // unlock-keychain --unattended says the same; --no-agent checks only that the TPM opens it.
        let unlock = try sandbox.run(
            ["unlock-keychain", "--unattended", "--no-agent"], environment: Self.noPassphrase(sandbox, tpm))
        #expect(unlock.status == 36)
        #expect(
            unlock.stderr
                == refused.stderr.replacingOccurrences(
                    of: "latchkey: find-generic-password: ", with: "latchkey: unlock-keychain: "))
        #expect(
            try sandbox.run(
                ["unlock-keychain", "--unattended", "-p", "x"], environment: Self.noPassphrase(sandbox, tpm)
            )
            .status == 64)

        // A passphrase change keeps the key and the policies.
        let changed = try sandbox.run(
            ["set-keychain-password", "--new-passphrase-fd", "0"],
            environment: TPMEnrollmentTests.environment(sandbox, tpm), input: Data("second\n".utf8))
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(try Self.sign(sandbox, tpm, ["--pcrs", "16"], to: "later.json").status == 0)
        #expect(try Self.add(sandbox, tpm, "later.json").status == 0)
        #expect(try Self.readUnattended(sandbox, tpm).stdout == "hunter2\n")
        let unlocked = try sandbox.run(
            ["unlock-keychain", "--unattended", "--no-agent"], environment: Self.noPassphrase(sandbox, tpm))
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        #expect(
            unlocked.stderr
                == "latchkey: unlock-keychain: the TPM opens the keychain unattended; without the agent the keychain stays unlocked only within each latchkey command\n"
        )
    }

    @Test func aPolicyOfAnotherKeyOrOtherPCRsIsRefused() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, fingerprint) = try Self.sandbox(tpm)
        let otherFingerprint = try Self.keyPair(sandbox, "other")
        #expect(try Self.sign(sandbox, tpm, key: "other", ["--pcrs", "16"], to: "other.json").status == 0)
        let foreign = try Self.add(sandbox, tpm, "other.json")
        #expect(foreign.status == 51)
        #expect(
            foreign.stderr
                == "latchkey: tpm: The user name or passphrase you entered is not correct. (the policy is signed by another key (sha256:\(otherFingerprint)), not the keychain's policy key (sha256:\(fingerprint)))\n"
        )

        // The other key's signature under the keychain key's fingerprint: the signature is what counts.
        let text = try String(contentsOfFile: sandbox.directory.file("other.json"), encoding: .utf8)
        try text.replacingOccurrences(of: otherFingerprint, with: fingerprint)
            .write(toFile: sandbox.directory.file("forged.json"), atomically: true, encoding: .utf8)
        let forged = try Self.add(sandbox, tpm, "forged.json")
        #expect(forged.status == 51)
        #expect(
            forged.stderr
                == "latchkey: tpm: The user name or passphrase you entered is not correct. (the policy's signature is not the policy key's (the file was altered?))\n"
        )

        #expect(try Self.sign(sandbox, tpm, ["--pcrs", "16,23"], to: "wide.json").status == 0)
        let wide = try Self.add(sandbox, tpm, "wide.json")
        #expect(wide.status == 206)
        #expect(
            wide.stderr
                == "latchkey: tpm: One or more parameters passed to a function were not valid. (the policy covers PCR 16,23; the keychain's unattended unlock is sealed to PCR 16)\n"
        )

        // None was taken: still no policy, still refused.
        let status = try sandbox.run(["tpm", "status"], environment: Self.noPassphrase(sandbox, tpm))
        #expect(
            status.stdout.contains(
                "policy key: sha256:\(fingerprint)\nsigned policies: none (latchkey tpm add-policy FILE)\n"))
        #expect(try Self.readUnattended(sandbox, tpm).status == 36)
    }

    @Test func aGarbledPolicyFileIsRefusedAndNothingIsLost() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, _) = try Self.sandbox(tpm)
        #expect(try Self.sign(sandbox, tpm, ["--pcrs", "16"], to: "good.json").status == 0)
        #expect(try Self.add(sandbox, tpm, "good.json").status == 0)
        let good = try String(contentsOfFile: sandbox.directory.file("good.json"), encoding: .utf8)
        let digestLine = good.split(separator: "\n").first { $0.contains("\"policy\"") }.map(String.init) ?? ""
        let cases: [(String, String)] = [
            (
                "not json at all",
                "the signed policy is not a Latchkey PCR policy file (JSON with format, key, pcrs, policy and signature)"
            ),
            (
                String(good.prefix(good.count / 2)),
                "the signed policy is not a Latchkey PCR policy file (JSON with format, key, pcrs, policy and signature)"
            ),
            (
                good.replacingOccurrences(of: "latchkey-tpm-pcr-policy/1", with: "systemd"),
                "the signed policy's format is 'systemd', not latchkey-tpm-pcr-policy/1"
            ),
            (
                good.replacingOccurrences(of: digestLine, with: "  \"policy\" : \"\(Self.hex(Self.zero))\","),
                "the signed policy's digest is not the TPM2_PolicyPCR digest of its PCR values"
            ),
            (
                good.replacingOccurrences(of: "\"16\" :", with: "\"24\" :"),
                "the signed policy's pcrs map PCR numbers (0 to 23) to SHA-256 values (64 hexadecimal digits)"
            ),
            (
                good.replacingOccurrences(of: "\"signature\" : \"", with: "\"signature\" : \"!"),
                "the signed policy's signature is not 64 bytes (r ‖ s) in base64"
            ),
        ]
        for (index, (contents, detail)) in cases.enumerated() {
            try contents.write(toFile: sandbox.directory.file("bad\(index).json"), atomically: true, encoding: .utf8)
            let refused = try Self.add(sandbox, tpm, "bad\(index).json")
            #expect(refused.status == 93, "\(index)")
            #expect(refused.stderr == "latchkey: tpm: Unable to decode the provided data. (\(detail))\n", "\(index)")
        }
        let missing = try Self.add(sandbox, tpm, "absent.json")
        #expect(missing.status == 1)
        #expect(missing.stderr == "latchkey: tpm: cannot read \(sandbox.directory.file("absent.json")): no such file\n")
        // The policy held before still opens it.
        #expect(try Self.readUnattended(sandbox, tpm).stdout == "hunter2\n")
    }

    @Test func theNewestSixteenPoliciesAreKeptAndEachOnce() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, _) = try Self.sandbox(tpm)
        let values = (0..<18).map { Data(repeating: UInt8($0), count: 32) }
        for (index, value) in values.enumerated() {
            #expect(
                try Self.sign(sandbox, tpm, ["--pcrs", "16", "--pcr", "16=\(Self.hex(value))"], to: "\(index).json")
                    .status == 0)
            #expect(try Self.add(sandbox, tpm, "\(index).json").status == 0)
        }
        #expect(try Self.add(sandbox, tpm, "5.json").status == 0)  // Again: it moves to the end, once.
        let status = try sandbox.run(["tpm", "status"], environment: Self.noPassphrase(sandbox, tpm)).stdout
        let held = status.split(separator: "\n").filter { $0.hasPrefix("signed policy: ") }
        let expected = (Array(2..<18).filter { $0 != 5 } + [5]).map { index in
            "signed policy: PCR 16=\(Self.hex(values[index]))\(index == 0 ? " (the PCRs now)" : " (not the PCRs now)")"
        }
        #expect(held.count == 16)
        #expect(held.map(String.init) == expected)
        // The policy for the PCR's present value (zero) was the oldest and went: refused.
        #expect(try Self.readUnattended(sandbox, tpm).status == 36)
    }

    @Test func theSignerNeedsNoTPMForExpectedValues() throws {
        let sandbox = CLISandbox()
        let fingerprint = try Self.keyPair(sandbox, "signer")
        var environment = sandbox.environment
        environment["LATCHKEY_TPM_TCTI"] = "swtpm:host=127.0.0.1,port=9"  // The admin's machine: no TPM.
        let next = Self.extended(Self.zero, with: Self.measurement)
        let signed = try sandbox.run(
            [
                "tpm", "sign-policy", "--key", sandbox.directory.file("signer.pem"), "--pcrs", "7,16", "--pcr",
                "16=\(Self.hex(next))",
                "--pcr", "7=\(Self.hex(Self.zero))",
            ], environment: environment)
        #expect(signed.status == 0, "\(signed.stderr)")
        #expect(signed.stderr == "")
        let policy = try TPMSignedPolicy(fileContents: Data(signed.stdout.utf8))
        #expect(policy.pcrValues == [7: Self.zero, 16: next])
        #expect(Self.hex(policy.keyFingerprint) == fingerprint)
        #expect(
            signed.stdout.contains(
                "\"pcrs\" : {\n    \"16\" : \"\(Self.hex(next))\",\n    \"7\" : \"\(Self.hex(Self.zero))\"\n  },"),
            "\(signed.stdout)")

        let unread = try sandbox.run(
            [
                "tpm", "sign-policy", "--key", sandbox.directory.file("signer.pem"), "--pcrs", "7,16", "--pcr",
                "16=\(Self.hex(next))",
            ],
            environment: environment)
        #expect(unread.status == 53)
        #expect(
            unread.stderr.hasPrefix(
                "latchkey: tpm: No keychain is available. (no TPM answers at swtpm:host=127.0.0.1,port=9 ("),
            "\(unread.stderr)")
        #expect(
            unread.stderr.hasSuffix(
                "), so the present PCR values cannot be read; give the expected ones (--pcr n=HEX))\n"),
            "\(unread.stderr)")

        // An encrypted signing key opens with --key-passphrase-fd, and only with its passphrase.
        let encrypted = try HelperProcess.run(
            "/usr/bin/openssl",
            [
                "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", sandbox.directory.file("signer.pem"), "-out",
                sandbox.directory.file("locked.pem"), "-passout", "pass:signing secret",
            ])
        #expect(encrypted.status == 0, "\(encrypted.stderr)")
        let lockedOptions = [
            "tpm", "sign-policy", "--key", sandbox.directory.file("locked.pem"), "--pcrs", "7", "--pcr",
            "7=\(Self.hex(Self.zero))", "--key-passphrase-fd", "0",
        ]
        let unlocked = try sandbox.run(lockedOptions, environment: environment, input: Data("signing secret\n".utf8))
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        #expect(try TPMSignedPolicy(fileContents: Data(unlocked.stdout.utf8)).keyFingerprint == policy.keyFingerprint)
        let wrong = try sandbox.run(lockedOptions, environment: environment, input: Data("guess\n".utf8))
        #expect(wrong.status == 51)
        #expect(
            wrong.stderr
                == "latchkey: tpm: The user name or passphrase you entered is not correct. (\(sandbox.directory.file("locked.pem")): the passphrase does not open the encrypted private key)\n"
        )

        let publicOnly = try sandbox.run(
            [
                "tpm", "sign-policy", "--key", sandbox.directory.file("signer.pub.pem"), "--pcrs", "7", "--pcr",
                "7=\(Self.hex(Self.zero))",
            ],
            environment: environment)
        #expect(publicOnly.status == 206)
        #expect(
            publicOnly.stderr
                == "latchkey: tpm: One or more parameters passed to a function were not valid. (\(sandbox.directory.file("signer.pub.pem")) holds no private key in PEM)\n"
        )
    }

    @Test func aKeychainSealedToFixedPCRsTakesNoPolicy() throws {
        let tpm = try SoftwareTPM()
        let (sandbox, _) = try TPMUnattendedTests.sandbox(tpm, pcrs: "16")
        _ = try Self.keyPair(sandbox, "signer")
        #expect(try Self.sign(sandbox, tpm, ["--pcrs", "16"], to: "p.json").status == 0)
        let refused = try Self.add(sandbox, tpm, "p.json")
        #expect(refused.status == 44)
        #expect(
            refused.stderr
                == "latchkey: tpm: The specified item could not be found in the keychain. (the keychain's unattended unlock takes no signed policies (latchkey tpm enroll --unattended --pcrs … --policy-key KEY.pem))\n"
        )
        #expect(try TPMUnattendedTests.readUnattended(sandbox, tpm).stdout == "hunter2\n")
    }

    @Test(arguments: [
        ["enroll", "--policy-key", "x.pem"], ["sign-policy", "--pcrs", "16"], ["sign-policy", "--key", "k.pem"],
        ["sign-policy", "--key", "k.pem", "--pcrs", "16", "--pcr", "7=00"],
        ["sign-policy", "--key", "k.pem", "--pcrs", "16", "--pcr", "16=00"], ["add-policy"],
        ["status", "a", "b"],
    ])
    func badOptionsAreUsageErrors(_ options: [String]) throws {
        let tpm = try SoftwareTPM()
        let sandbox = CLISandbox()
        try sandbox.createKeychain()
        let output = try sandbox.run(["tpm"] + options, environment: TPMEnrollmentTests.environment(sandbox, tpm))
        #expect(output.status == 64, "\(output.stderr)")
        #expect(
            output.stderr.hasSuffix(
                "Usage: latchkey tpm enroll|status|remove|recover|sign-policy|add-policy|set-lockout-auth [options] [FILE] [keychain]\n"
            ),
            "\(output.stderr)")
    }
}
