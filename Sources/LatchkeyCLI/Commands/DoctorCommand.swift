import FoundationEssentials
import Latchkey
import LatchkeyCrypto
import LatchkeyPOSIX

/// doctor: checks the environment and the keychain, and says what to fix.
enum DoctorCommand {
    static let command = Command(
        "doctor", synopsis: "[--no-unlock] [keychain] | --desktop [--json]",
        summary: "Check the keychain and its environment, or the desktop's use of it.",
        details: """
            Checks the environment (where keychains live, whether a passphrase sits in the environment) and the \
            keychain: that it exists and is a Latchkey keychain, its permissions and those of its directory and \
            device key, its format version, its key derivation parameters, and — after unlocking it — the \
            integrity of every item — and whether an agent serves it. Each finding is printed as "ok", "warning" or \
            "error" with what to do about it, and a check that could not run as "skipped" with the reason (the \
            integrity check needs the passphrase: without a terminal, --passphrase-fd, --passphrase-file or \
            LATCHKEY_PASSPHRASE it is skipped, not failed; on a terminal, standard error shows its progress). \
            The exit status is 0 when there is no error and 1 otherwise. \
            With --desktop it checks the desktop instead: who holds org.freedesktop.secrets (pid and program) and \
            which activation files name it; the other providers' units and autostart entries; for each login \
            screen present (GDM's password, fingerprint and autologin stacks, SDDM, LightDM, greetd, console login, \
            sshd) what the next login will do — unlock, unlock through the TPM, or leave the keychain locked with \
            pam_latchkey's message or without a word — read from its PAM files, includes and module order; the \
            secret portal's backends, its routing and xdg-desktop-portal's version; whether the agent runs and is \
            unlocked. Each problem is followed by a line "fix:" saying what to do; with --json the findings and \
            each login's verdict are printed as JSON. Its exit status is 1 when there is an error.
            """,
        options: [
            OptionSpec(.noUnlock, "Skip the checks that need the passphrase (item integrity)."),
            OptionSpec(.desktop, "Check the desktop's Secret Service, login screens, portal and agent instead."),
            OptionSpec(.json, "With --desktop: print the findings as JSON."),
        ] + passphraseOptions
    ) { arguments, context in
        if arguments.has(.desktop) {
            guard arguments.positionals.isEmpty else {
                throw UsageError(message: "--desktop checks the default keychain; it takes no keychain argument")
            }
            return try DesktopDoctor.run(arguments, context: context)
        }
        if arguments.has(.json) { throw UsageError(message: "--json goes with --desktop") }
        var errors = 0
        func report(_ level: String, _ message: String) {
            if level == "error" { errors += 1 }
            context.stdout.line(level.padded(to: 8) + " " + message)
        }
        let path = context.keychainPath(arguments.positionals.first)
        report(
            "ok",
            "keychain \(path) (from \(arguments.positionals.first != nil ? "the argument" : context.environment["LATCHKEY_KEYCHAIN"] != nil ? "LATCHKEY_KEYCHAIN" : "the default"))"
        )
        if context.environment[PassphraseSource.environmentVariable] != nil {
            report(
                "warning",
                "LATCHKEY_PASSPHRASE is set: every process of this user can read it; prefer a prompt, --passphrase-fd or a 0600 key file"
            )
        }
        guard FileManager.default.fileExists(atPath: path) else {
            report(
                "error", "the keychain does not exist; create it with `latchkey create-keychain \(shellQuoted(path))`")
            return 1
        }
        let inspection = KeychainDatabase.inspect(at: path)
        func mode(_ value: Int?) -> String { value.map { "0" + String($0, radix: 8) } ?? "missing" }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        if let fileMode = inspection.fileMode, fileMode & 0o077 != 0 {
            report("error", "the keychain file's mode is \(mode(fileMode)); run `chmod 600 \(path)`")
        } else {
            report("ok", "keychain file mode \(mode(inspection.fileMode))")
        }
        if let directoryMode = inspection.directoryMode, directoryMode & 0o022 != 0 {
            report("error", "the directory's mode is \(mode(directoryMode)); run `chmod 700 \(directory)`")
        } else {
            report("ok", "directory mode \(mode(inspection.directoryMode))")
        }
        if let deviceMode = inspection.deviceKeyMode, deviceMode & 0o077 != 0 {
            report("error", "the device key's mode is \(mode(deviceMode)); run `chmod 600 \(path).device-key`")
        }
        if !inspection.ownedByCurrentUser { report("error", "the keychain belongs to another user") }
        if let problem = inspection.problem {
            report("error", "the keychain cannot be opened: \(problem.message)")
            return 1
        }
        if let durability = inspection.durability {
            let names = [0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"]
            let text =
                "journal mode \(durability.journalMode), synchronous \(names[durability.synchronous] ?? "\(durability.synchronous)"), "
                + "secure_delete \(durability.secureDelete ? "on" : "off")"
            report(
                durability.isDurable ? "ok" : "error",
                durability.isDurable
                    ? "durability: \(text) (an acknowledged write survives a power cut)"
                    : "durability: \(text); an acknowledged write could be lost")
        }
        if let version = inspection.formatVersion {
            report("ok", "format version \(version) (this Latchkey reads up to \(inspection.supportedFormatVersion))")
        }
        if let derivation = inspection.keyDerivation {
            if derivation.memoryBytes < KeyDerivation.default.memoryBytes
                || derivation.passes < KeyDerivation.default.passes
            {
                report(
                    "warning",
                    "key derivation \(derivation) is weaker than the default (\(KeyDerivation.default)); strengthen it with `latchkey set-keychain-password --kdf-memory 64 --kdf-passes 3`"
                )
            } else {
                report("ok", "key derivation \(derivation)")
            }
        }
        if let tpm = inspection.tpm {
            for (level, message) in tpmFindings(tpm) { report(level, message) }
            report(
                inspection.deviceKeyWorks ? "ok" : "warning",
                inspection.deviceKeyWorks
                    ? "device key sealed by the TPM: items readable at any time open without the passphrase, on this machine only"
                    : "the device key sealed by the TPM cannot be had now: items readable at any time open only after an unlock"
            )
        } else {
            report("ok", "TPM: not enrolled (`latchkey tpm enroll` binds the keychain to this machine's TPM)")
            report(
                inspection.deviceKeyWorks ? "ok" : "warning",
                inspection.deviceKeyWorks
                    ? "device key present: items readable at any time open without the passphrase"
                    : "no working device key beside the keychain: items readable at any time open only after an unlock")
        }
        if inspection.walBytes > 64 << 20 {
            report(
                "warning",
                "the write-ahead log holds \(inspection.walBytes >> 20) MiB; it shrinks when no process keeps the keychain open"
            )
        }
        do {
            if let client = try AgentAccess.client(for: path, context: context) {
                let status = try client.status()
                report(
                    "ok",
                    "agent pid \(status.agentProcessIdentifier.map(String.init) ?? "?") serves it (\(status.lockState))"
                )
            } else {
                report("ok", "no agent serves it: programs open it themselves, with the passphrase")
            }
        } catch {
            report("warning", "an agent socket is there but the agent cannot be asked: \(error)")
        }
        let (level, tracing) = ptraceFinding(Processes.ptraceScope())
        report(level, tracing)
        if arguments.has(.noUnlock) {
            report("skipped", "integrity: --no-unlock")
        } else {
            let keychain: KeychainDatabase
            do {
                keychain = try context.openUnlocked(
                    path, displayName: context.keychainName(arguments.positionals.first), arguments: arguments)
            } catch {
                // No terminal and no other passphrase source: the one check that needs it is skipped, not failed.
                guard let refusal = error as? KeychainError, refusal.status == .interactionNotAllowed else {
                    throw error
                }
                report("skipped", "integrity: it needs the passphrase, and \(refusal.detail ?? refusal.message)")
                return errors == 0 ? 0 : 1
            }
            let integrity = try context.withProgress("doctor") { try keychain.verifyIntegrity(progress: $0) }
            if let held = heldKeysFinding(try keychain.heldKeyStorage()) { report("ok", held) }
            if integrity.isHealthy {
                report("ok", "integrity: \(integrity)")
            } else {
                report("error", "integrity: \(integrity)")
                for item in integrity.damaged {
                    report(
                        "error",
                        "damaged \(item.itemClass.rawValue) item \(Hex.encode(item.persistentReference)): \(item.reason); restore it from a backup, or delete it"
                    )
                }
            }
        }
        return errors == 0 ? 0 : 1
    }

    /// doctor's line on the keys the keychain holds, by where they live; nil when it holds none.
    static func heldKeysFinding(_ counts: [KeyStorage: Int]) -> String? {
        let tpm = counts[.tpm] ?? 0
        let software = counts[.software] ?? 0
        guard tpm + software > 0 else { return nil }
        func keys(_ count: Int) -> String { "\(count) key\(count == 1 ? "" : "s")" }
        return
            "keys the keychain holds: \(keys(tpm)) made inside the TPM (never out of it), \(keys(software)) held in software (in memory where the keychain runs)"
    }

    /// doctor's findings on an enrolled keychain's TPM: where it is, whether it is the one the keychain is
    /// sealed to, and its lockout state.
    static func tpmFindings(_ tpm: TPMBinding) -> [(String, String)] {
        guard tpm.present else {
            return [
                (
                    "error",
                    "TPM: the keychain is bound to a TPM, but none answers at \(tpm.address) (\(tpm.problem ?? "no answer")); set LATCHKEY_TPM_TCTI, or open it with its recovery code: `latchkey tpm recover`"
                )
            ]
        }
        guard tpm.sameTPM == true else {
            return [
                (
                    "error",
                    "TPM: the TPM at \(tpm.address) is not the one the keychain is sealed to (another machine, or this TPM was cleared); `latchkey tpm recover` opens it with its recovery code and binds it to this one"
                )
            ]
        }
        // Counted, and bounded only while no one can reset the count (the lockout authorization is set).
        let bounded =
            tpm.lockout?.lockoutAuthSet == true
            ? "every passphrase guess is counted by the TPM, and only whoever holds its lockout authorization can reset the count"
            : "every passphrase guess is checked by the TPM"
        var findings = [("ok", "TPM: the keychain is bound to the TPM at \(tpm.address); \(bounded)")]
        if let lockout = tpm.lockout {
            let counted =
                "\(lockout.failedTries) of \(lockout.maxTries) failed attempts counted, one forgiven every \(lockout.recoveryInterval) s"
            findings.append(
                lockout.inLockout
                    ? (
                        "error",
                        "TPM lockout: locked out (\(counted)); no passphrase opens the keychain until it lifts, in about \(lockout.recoveryInterval) s; the recovery code opens it meanwhile"
                    )
                    : ("ok", "TPM lockout: not locked out, \(counted)"))
            if let warning = TPMLockoutAuthorizationText.doctorWarning(set: lockout.lockoutAuthSet) {
                findings.append(warning)
            }
        }
        return findings
    }

    /// What `kernel.yama.ptrace_scope` means for per-program access (docs/LATCHKEY-SECURITY.md): a program
    /// that may trace another of the user's programs can act as it, so registrations and the isolated Secret
    /// Service stop only programs that may not.
    static func ptraceFinding(_ scope: Int?) -> (level: String, message: String) {
        switch scope {
        case nil:
            return (
                "warning",
                "Yama is not enabled (no kernel.yama.ptrace_scope): any program of this user may trace another and act as it, "
                    + "so per-program access stops only programs that do not"
            )
        case 0:
            return (
                "warning",
                "kernel.yama.ptrace_scope is 0: any program of this user may trace another and act as it, so per-program "
                    + "access stops only programs that do not; `sysctl kernel.yama.ptrace_scope=1` limits tracing to a program's own children"
            )
        case 1: return ("ok", "kernel.yama.ptrace_scope is 1: a program may trace only its own children")
        case 2: return ("ok", "kernel.yama.ptrace_scope is 2: only a program with CAP_SYS_PTRACE may trace another")
        case let value?: return ("ok", "kernel.yama.ptrace_scope is \(value): no program may trace another")
        }
    }

    /// `path` as a shell word to paste: as it is when it holds only characters no shell treats specially,
    /// else in single quotes.
    static func shellQuoted(_ path: String) -> String {
        let plain = path.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                || "/._-+@%:,=".unicodeScalars.contains(scalar)
        }
        return plain && !path.isEmpty ? path : "'" + path.replacing("'", with: #"'\''"#) + "'"
    }
}
