import FoundationEssentials
import Latchkey
import LatchkeyCrypto
import LatchkeyPOSIX

/// `latchkey tpm enroll|status|remove|recover [keychain]`: binding a keychain to this machine's TPM 2.0;
/// `tpm sign-policy` and `tpm add-policy FILE`: signed PCR policies for the unattended unlock;
/// `tpm set-lockout-auth`: a lockout authorization no one keeps, so no one can reset the guess counter.
enum TPMCommands {
    static let actions = ["enroll", "status", "remove", "recover", "sign-policy", "add-policy", "set-lockout-auth"]

    static let command = Command(
        "tpm",
        synopsis: "enroll|status|remove|recover|sign-policy|add-policy|set-lockout-auth [options] [FILE] [keychain]",
        summary: "Bind a keychain to this machine's TPM, show the binding, undo it or recover without the TPM.",
        details: """
            `tpm enroll` binds the keychain to the TPM 2.0 of this machine: from then on its keys need, besides the \
            passphrase, a secret the TPM releases only for the right passphrase, so every guess is a TPM operation \
            that the TPM counts toward its dictionary-attack lockout, and a copy of the file cannot be attacked on \
            another machine. It prints a recovery code once, on standard output: write it down, it opens the \
            keychain without the TPM. `tpm enroll --unattended --pcrs 7[,…]` also seals a key to the present values \
            of those PCRs (the measured firmware, boot loader, kernel), so a service's keychain opens at boot with no \
            passphrase — a command given no passphrase uses it — and refuses with a clear error after a PCR change, \
            when the passphrase or the recovery code still opens it; run it again to seal to the new values. \
            With --policy-key PUBLIC.pem (an EC P-256 key) the key is sealed instead to whatever PCR values that \
            key's owner signs: `tpm sign-policy --key PRIVATE.pem --pcrs 7 [--pcr 7=HEX …] --output FILE` (an encrypted key's \
            passphrase from --key-passphrase-fd), run \
            where the private key is, writes a signed policy for the present values of those PCRs (or the \
            expected ones --pcr gives, such as those a firmware update will measure), and `tpm add-policy FILE` \
            gives it to the keychain (no passphrase needed); the unattended unlock opens while the PCRs hold the \
            values of a policy it holds, so an expected update needs no recovery. \
            The TPM bounds passphrase guesses only while no one can reset its count of failed attempts, which \
            anyone who can run TPM commands on the machine can do while the TPM's lockout authorization is empty \
            (as on swtpm and most Linux PCs that Windows never provisioned): `tpm enroll --set-lockout-auth`, or \
            `tpm set-lockout-auth` at any time, gives it a random one that Latchkey keeps nowhere, so no one can \
            reset the count (nor change the TPM's lockout parameters) — a lockout then lifts only with time, or by \
            clearing the TPM from the firmware, which destroys every key it sealed; one someone else set is left \
            as it is. On a terminal, enroll asks when the TPM's is empty (--leave-lockout-auth: do not ask). \
            `tpm status` shows where the TPM is, whether the keychain is enrolled, whether \
            the TPM is the one it is sealed to, its lockout state and whether its lockout authorization is set; \
            it needs no passphrase. `tpm remove` undoes the \
            binding (the passphrase alone opens the keychain again). `tpm recover` opens the keychain with its \
            recovery code (asked for, or read from --recovery-code-fd), sets the passphrase (asked for twice, or read \
            from --passphrase-fd, --passphrase-file or LATCHKEY_PASSPHRASE) and binds it to the TPM that answers now, printing a new recovery code; with \
            --no-tpm it leaves the keychain protected by the passphrase alone. The TPM is the one LATCHKEY_TPM_TCTI \
            names (a tpm2-tss TCTI such as swtpm:host=127.0.0.1,port=2321), else device:/dev/tpmrm0.
            """,
        options: [
            OptionSpec(
                .unattended,
                "With enroll: also let the keychain open with no passphrase while the PCRs keep their values."),
            OptionSpec(
                .pcrs, .required, value: "list",
                "With enroll --unattended: the SHA-256 PCRs to seal to, such as 7 or 7,11; with sign-policy: the PCRs the policy covers."
            ),
            OptionSpec(
                .policyKey, .required, value: "path",
                "With enroll --unattended: seal to the PCR values this EC P-256 public key (PEM) signs policies for."),
            OptionSpec(
                .signingKey, .required, value: "path", "With sign-policy: the EC P-256 private key (PEM) that signs."),
            OptionSpec(
                .pcr, .required, value: "n=hex",
                "With sign-policy: the expected SHA-256 value of PCR n (64 hexadecimal digits) instead of its present value; repeatable."
            ),
            OptionSpec(.policyOutput, .required, value: "path", "With sign-policy: where to write the signed policy."),
            OptionSpec(
                .keyPassphraseFD, .required, value: "fd",
                "With sign-policy: read the passphrase of an encrypted --key from this open file descriptor (one line)."
            ),
            OptionSpec(
                .recoveryCodeFD, .required, value: "fd",
                "With recover: read the recovery code from this file descriptor."),
            OptionSpec(.noTPM, "With recover: do not bind the keychain to a TPM again."),
            OptionSpec(
                .setLockoutAuth,
                "With enroll: give the TPM a random lockout authorization that no one keeps, when its own is empty."),
            OptionSpec(
                .leaveLockoutAuth,
                "With enroll: leave the TPM's lockout authorization as it is, and do not ask on a terminal."),
        ] + passphraseOptions,
        positionals: 1...3
    ) { arguments, context in
        let action = arguments.positionals[0]
        guard actions.contains(action) else {
            throw UsageError(message: "unknown tpm action '\(action)'; one of: \(actions.joined(separator: ", "))")
        }
        if action == "sign-policy" { return try signPolicy(arguments, context: context) }
        if action == "set-lockout-auth" {
            guard arguments.positionals.count == 1 else {
                throw UsageError(message: "tpm set-lockout-auth takes no keychain: the authorization is the TPM's")
            }
            TPMLockoutAuthorizationText.report(try TPMLockoutAuthorization.setRandomIfEmpty(), context: context)
            return 0
        }
        let takesFile = action == "add-policy"
        guard arguments.positionals.count >= (takesFile ? 2 : 1) else {
            throw UsageError(message: "tpm add-policy needs the signed policy's file")
        }
        guard arguments.positionals.count <= (takesFile ? 3 : 2) else {
            throw UsageError(message: "unexpected argument \"\(arguments.positionals.last ?? "")\"")
        }
        let name = arguments.positionals.dropFirst(takesFile ? 2 : 1).first
        let path = context.keychainPath(name)
        let keychain = try KeychainDatabase.open(at: path)
        switch action {
        case "enroll":
            guard arguments.has(.unattended) == arguments.has(.pcrs) else {
                throw UsageError(message: "--unattended needs --pcrs, and --pcrs goes with --unattended")
            }
            guard !arguments.has(.policyKey) || arguments.has(.unattended) else {
                throw UsageError(message: "--policy-key goes with --unattended --pcrs")
            }
            guard !(arguments.has(.setLockoutAuth) && arguments.has(.leaveLockoutAuth)) else {
                throw UsageError(message: "--set-lockout-auth and --leave-lockout-auth cannot go together")
            }
            let policyKey = try arguments.value(.policyKey).map { file in try readKey(file, isPrivate: false) }
            let passphrase = try context.passphrase(
                arguments, prompt: "password to unlock \(context.keychainName(name)): ")
            let settingLockoutAuthorization = try TPMLockoutAuthorizationText.setting(arguments, context: context)
            let result: TPMEnrollmentResult
            if let list = arguments.value(.pcrs) {
                result = try keychain.enrollUnattended(
                    passphrase: passphrase, pcrs: try pcrs(list), policyKey: policyKey,
                    settingLockoutAuthorization: settingLockoutAuthorization)
            } else {
                result = try keychain.enrollTPM(
                    passphrase: passphrase, settingLockoutAuthorization: settingLockoutAuthorization)
            }
            if let code = result.recoveryCode {
                context.stdout.line("recovery code: \(code.text)")
                context.stderr.line(
                    "latchkey: tpm: the keychain is bound to the TPM at \(TPMAddress.current); write the recovery code down, it is shown only now and opens the keychain without the TPM"
                )
            }
            TPMLockoutAuthorizationText.report(result.lockoutAuthorization, context: context)
            if let list = arguments.value(.pcrs), policyKey == nil {
                context.stderr.line(
                    "latchkey: tpm: the keychain opens with no passphrase while PCR \(list) keep their present values")
            } else if let list = arguments.value(.pcrs), let policyKey {
                let fingerprint = try TPMSignedPolicy.fingerprint(of: policyKey)
                context.stderr.line(
                    "latchkey: tpm: the keychain opens with no passphrase while PCR \(list) hold values a policy signed by sha256:\(Hex.encode(fingerprint)) approves (latchkey tpm add-policy)"
                )
            }
        case "add-policy":
            let file = arguments.positionals[1]
            let policy = try TPMSignedPolicy(fileContents: try CertificateCommands.readFile(file))
            try keychain.addSignedPolicy(policy)
            context.stderr.line(
                "latchkey: tpm: the keychain opens with no passphrase while PCR \(describe(policy.pcrValues))")
        case "status":
            for line in describe(try keychain.tpmBinding) { context.stdout.line(line) }
        case "remove":
            let passphrase = try context.passphrase(
                arguments, prompt: "password to unlock \(context.keychainName(name)): ")
            try keychain.removeTPM(passphrase: passphrase)
            context.stderr.line(
                "latchkey: tpm: the keychain is no longer bound to a TPM; its passphrase alone opens it and the recovery code is void"
            )
        default:
            let code = try recoveryCode(arguments, context: context)
            let passphrase = try KeychainCommands.newPassphrase(
                arguments, context: context, insecureKey: nil, fdKey: .passphraseFD,
                prompts: ("New Password: ", "Retype New Password: "))
            if let fresh = try keychain.recoverTPM(
                code: code, passphrase: passphrase, reenroll: !arguments.has(.noTPM))
            {
                context.stdout.line("recovery code: \(fresh.text)")
                context.stderr.line(
                    "latchkey: tpm: the keychain is bound to the TPM at \(TPMAddress.current) again; the old recovery code is void, write the new one down"
                )
            } else {
                context.stderr.line(
                    "latchkey: tpm: the keychain is no longer bound to a TPM; its new passphrase alone opens it")
            }
        }
        return 0
    }

    /// `tpm sign-policy --key PRIVATE.pem --pcrs 7,… [--pcr 7=HEX …] [--output FILE]`: a signed policy for the
    /// present values of the PCRs (read from the TPM) or the expected ones given; no keychain is involved.
    static func signPolicy(_ arguments: ParsedArguments, context: CLIContext) throws -> Int32 {
        guard arguments.positionals.count == 1 else {
            throw UsageError(message: "tpm sign-policy takes no keychain")
        }
        guard let keyFile = arguments.value(.signingKey), let list = arguments.value(.pcrs) else {
            throw UsageError(message: "tpm sign-policy needs --key PRIVATE.pem and --pcrs")
        }
        let covered = try pcrs(list)
        var expected: [Int: Data] = [:]
        for given in arguments.allValues(.pcr) {
            let parts = given.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let index = Int(parts[0]), covered.contains(index),
                let value = Hex.decode(parts[1]).map({ Data($0) }), value.count == 32
            else {
                throw UsageError(
                    message:
                        "--pcr takes n=HEX, a PCR of --pcrs and its SHA-256 value in 64 hexadecimal digits, not '\(given)'"
                )
            }
            expected[index] = value
        }
        let key = try readKey(
            keyFile, isPrivate: true,
            passphrase: try PKITransfer.keyPassphrase(arguments, context: context, insecureKey: nil) ?? "")
        let missing = covered.filter { expected[$0] == nil }
        if !missing.isEmpty {
            for (index, value) in try TPMSignedPolicy.currentPCRValues(missing) { expected[index] = value }
        }
        let policy = try TPMSignedPolicy.sign(pcrValues: expected, key: key)
        if let output = arguments.value(.policyOutput) {
            do throws(Errno) {
                // Written beside the destination, then renamed over it: a reader sees the old file or the new one.
                let temporary = output + ".latchkey-" + Hex.encode(SecureRandom.bytes(6))
                try Files.createExclusive(temporary, contents: policy.fileContents, mode: 0o644)
                do throws(Errno) {
                    try Files.rename(temporary, to: output)
                } catch {
                    try? Files.remove(temporary)  // The rename's error is the one to report.
                    throw error
                }
            } catch {
                throw CommandFailure(message: "cannot write \(output): \(error)")
            }
            context.stderr.line(
                "latchkey: tpm: wrote a policy signed for PCR \(describe(policy.pcrValues)) to \(output)")
        } else {
            context.stdout.write(String(decoding: policy.fileContents, as: UTF8.self))
        }
        return 0
    }

    /// `7=<hex>, 11=<hex>`, ascending.
    static func describe(_ values: [Int: Data]) -> String {
        values.keys.sorted().map { "\($0)=\(Hex.encode(values[$0] ?? Data()))" }.joined(separator: ", ")
    }

    /// `--pcrs`'s PCR numbers.
    static func pcrs(_ list: String) throws -> [Int] {
        try list.split(separator: ",", omittingEmptySubsequences: false).map { text in
            guard let number = Int(text), (0..<24).contains(number) else {
                throw UsageError(message: "--pcrs takes PCR numbers from 0 to 23 separated by commas, not '\(list)'")
            }
            return number
        }
    }

    /// The first key of a PEM file (a public key, or a private one whose public half is used unless
    /// `isPrivate`; an encrypted one opened with `passphrase`): `errSecParam` when the file holds none.
    static func readKey(_ file: String, isPrivate: Bool, passphrase: String = "") throws -> AsymmetricKey {
        let text = String(decoding: try CertificateCommands.readFile(file), as: UTF8.self)
        let keys: [AsymmetricKey]
        do {
            keys = try AsymmetricKey.keys(inPEM: text, passphrase: passphrase)
        } catch {
            throw KeychainError(KeychainStatus(rawValue: error.kind.rawValue), "\(file): \(error.reason)")
        }
        guard let key = keys.first, !isPrivate || key.isPrivate else {
            throw KeychainError.param("\(file) holds no \(isPrivate ? "private key" : "key") in PEM")
        }
        return key
    }

    static func recoveryCode(_ arguments: ParsedArguments, context: CLIContext) throws -> RecoveryCode {
        var text: String
        if let fd = arguments.value(.recoveryCodeFD) {
            guard let descriptor = Int32(fd), descriptor >= 0 else {
                throw UsageError(message: "--recovery-code-fd needs a file descriptor number, not '\(fd)'")
            }
            let read = try PassphraseSource.fileDescriptor(descriptor).read()
            text = read.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        } else {
            var typed = try context.prompt("recovery code: ", alternatives: "--recovery-code-fd")
            defer { wipe(&typed) }
            text = String(decoding: typed, as: UTF8.self)
        }
        guard let code = RecoveryCode(text) else {
            throw KeychainError(.param, "that is not a recovery code (32 letters and digits in groups of four)")
        }
        text = ""
        return code
    }

    /// `tpm status`'s lines (also what `doctor` and `show-keychain-info` show of the binding).
    static func describe(_ binding: TPMBinding) -> [String] {
        var lines = [
            "tpm: \(binding.address) (\(binding.present ? "present" : "absent: \(binding.problem ?? "no answer")"))"
        ]
        lines.append("enrolled: \(binding.enrolled ? "yes" : "no")")
        if !binding.unattendedPCRs.isEmpty {
            lines.append("unattended: PCR \(binding.unattendedPCRs.map(String.init).joined(separator: ","))")
        }
        if let fingerprint = binding.policyKeyFingerprint {
            lines.append("policy key: sha256:\(Hex.encode(fingerprint))")
            if binding.signedPolicies.isEmpty { lines.append("signed policies: none (latchkey tpm add-policy FILE)") }
            for policy in binding.signedPolicies {
                let now =
                    binding.pcrValuesNow.isEmpty
                    ? "" : policy.pcrValues == binding.pcrValuesNow ? " (the PCRs now)" : " (not the PCRs now)"
                lines.append("signed policy: PCR \(describe(policy.pcrValues))\(now)")
            }
        }
        if binding.enrolled {
            lines.append("device key: \(binding.deviceKeySealed ? "sealed by the TPM" : "in the device key file")")
        }
        if binding.enrolled, let same = binding.sameTPM {
            lines.append(
                "sealed to this TPM: \(same ? "yes" : "no (another TPM, or this one after a clear: use tpm recover)")")
        }
        if let lockout = binding.lockout {
            lines.append(
                "lockout: \(lockout.inLockout ? "locked out" : "not locked out"), \(lockout.failedTries) of \(lockout.maxTries) failed attempts counted, one forgiven every \(lockout.recoveryInterval) s"
            )
            lines.append(TPMLockoutAuthorizationText.statusLine(set: lockout.lockoutAuthSet))
        }
        return lines
    }
}
