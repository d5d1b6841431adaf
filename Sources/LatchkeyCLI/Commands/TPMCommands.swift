import Foundation
import Latchkey

/// `latchkey tpm enroll|status|remove|recover [keychain]`: binding a keychain to this machine's TPM 2.0.
enum TPMCommands {
    static let actions = ["enroll", "status", "remove", "recover"]

    static let command = Command(
        "tpm", synopsis: "enroll|status|remove|recover [options] [keychain]",
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
            `tpm status` shows where the TPM is, whether the keychain is enrolled, whether \
            the TPM is the one it is sealed to and its lockout state; it needs no passphrase. `tpm remove` undoes the \
            binding (the passphrase alone opens the keychain again). `tpm recover` opens the keychain with its \
            recovery code (asked for, or read from --recovery-code-fd), sets the passphrase (asked for twice, or read \
            from --passphrase-fd, --passphrase-file or LATCHKEY_PASSPHRASE) and binds it to the TPM that answers now, printing a new recovery code; with \
            --no-tpm it leaves the keychain protected by the passphrase alone. The TPM is the one LATCHKEY_TPM_TCTI \
            names (a tpm2-tss TCTI such as swtpm:host=127.0.0.1,port=2321), else device:/dev/tpmrm0.
            """,
        options: [
            OptionSpec(
                nil, "unattended",
                "With enroll: also let the keychain open with no passphrase while the PCRs keep their values."),
            OptionSpec(
                nil, "pcrs", .required, value: "list",
                "With enroll --unattended: the SHA-256 PCRs to seal to, such as 7 or 7,11."),
            OptionSpec(
                nil, "recovery-code-fd", .required, value: "fd",
                "With recover: read the recovery code from this file descriptor."),
            OptionSpec(nil, "no-tpm", "With recover: do not bind the keychain to a TPM again."),
        ] + passphraseOptions,
        positionals: 1...2
    ) { arguments, context in
        let action = arguments.positionals[0]
        guard actions.contains(action) else {
            throw UsageError(message: "unknown tpm action '\(action)'; one of: \(actions.joined(separator: ", "))")
        }
        let name = arguments.positionals.dropFirst().first
        let path = context.keychainPath(name)
        let keychain = try KeychainDatabase.open(at: path)
        switch action {
        case "enroll":
            guard arguments.has("unattended") == arguments.has("pcrs") else {
                throw UsageError(message: "--unattended needs --pcrs, and --pcrs goes with --unattended")
            }
            let passphrase = try context.passphrase(
                arguments, prompt: "password to unlock \(context.keychainName(name)): ")
            let code: RecoveryCode?
            if let list = arguments.value("pcrs") {
                let pcrs = try list.split(separator: ",", omittingEmptySubsequences: false).map { text in
                    guard let number = Int(text), (0..<24).contains(number) else {
                        throw UsageError(
                            message: "--pcrs takes PCR numbers from 0 to 23 separated by commas, not '\(list)'")
                    }
                    return number
                }
                code = try keychain.enrollUnattended(passphrase: passphrase, pcrs: pcrs)
            } else {
                code = try keychain.enrollTPM(passphrase: passphrase)
            }
            if let code {
                context.stdout.line("recovery code: \(code.text)")
                context.stderr.line(
                    "latchkey: tpm: the keychain is bound to the TPM at \(TPMAddress.current); write the recovery code down, it is shown only now and opens the keychain without the TPM"
                )
            }
            if let list = arguments.value("pcrs") {
                context.stderr.line(
                    "latchkey: tpm: the keychain opens with no passphrase while PCR \(list) keep their present values")
            }
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
                arguments, context: context, insecureKey: "no-such-option", fdKey: "passphrase-fd",
                prompts: ("New Password: ", "Retype New Password: "))
            if let fresh = try keychain.recoverTPM(
                code: code, passphrase: passphrase, reenroll: !arguments.has("no-tpm"))
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

    static func recoveryCode(_ arguments: ParsedArguments, context: CLIContext) throws -> RecoveryCode {
        var text: String
        if let fd = arguments.value("recovery-code-fd") {
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
        }
        return lines
    }
}
