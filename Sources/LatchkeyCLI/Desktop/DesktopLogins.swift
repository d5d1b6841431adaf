/// What the next login of each login screen will do to the keychain, read from its PAM stack (module order
/// included): unlock it with the typed password, unlock it through the TPM, or leave it locked — with
/// pam_latchkey's one message, or without a word.
enum DesktopLogins {
    /// The login screens doctor looks for, by PAM service, with their names for people.
    static let screens: [(service: String, name: String)] = [
        ("gdm-password", "GDM (password)"), ("gdm-fingerprint", "GDM (fingerprint)"),
        ("gdm-autologin", "GDM (autologin)"), ("sddm", "SDDM"), ("sddm-autologin", "SDDM (autologin)"),
        ("lightdm", "LightDM"), ("lightdm-autologin", "LightDM (autologin)"), ("greetd", "greetd"),
        ("login", "console login"), ("sshd", "sshd"),
    ]

    /// What the next login does.
    enum Outcome: String, Codable {
        case unlock
        case unlockThroughTPM = "unlock-through-tpm"
        case lockedWithMessage = "locked-with-message"
        case lockedSilently = "locked-silently"
    }

    /// One login screen's verdict: the outcome, why, and — when it is a problem — what to do.
    struct Verdict: Codable, Equatable {
        let service: String
        let name: String
        let outcome: Outcome
        let reason: String
        /// "error", "warning" or "ok".
        let level: String
        let fix: String?
    }

    /// Modules that take the typed password and set PAM_AUTHTOK.
    static let passwordModules = [
        "pam_unix.so", "pam_sss.so", "pam_ldap.so", "pam_krb5.so", "pam_winbind.so", "pam_systemd_home.so",
    ]

    /// Whether a line is pam_latchkey acting for `service` (its `only_if=` names it, or it has none).
    static func applies(_ line: PAMStack.Line, to service: String) -> Bool {
        guard line.module == "pam_latchkey.so" else { return false }
        guard let only = line.arguments.first(where: { $0.hasPrefix("only_if=") }) else { return true }
        return only.dropFirst("only_if=".count).split(separator: ",").contains { $0 == service }
    }

    static func verdict(_ stack: PAMStack, name: String, unattendedTPM: Bool) -> Verdict {
        let service = stack.service
        let auth = stack.lines("auth")
        let session = stack.lines("session")
        let password = auth.firstIndex { passwordModules.contains($0.module) }
        let latchkeyAuth = auth.firstIndex { applies($0, to: service) }
        let latchkeySession = session.firstIndex { applies($0, to: service) }
        func verdict(_ outcome: Outcome, _ reason: String, _ level: String, _ fix: String? = nil) -> Verdict {
            Verdict(service: service, name: name, outcome: outcome, reason: reason, level: level, fix: fix)
        }
        guard let latchkeySession else {
            let reason =
                session.contains { $0.module == "pam_latchkey.so" }
                ? "its pam_latchkey session line's only_if= leaves \(service) out"
                : "no pam_latchkey session line in its stack"
            if service == "sshd" {
                return verdict(.lockedSilently, reason + " (remote logins leave the keychain locked)", "ok")
            }
            return verdict(
                .lockedSilently, reason, "error",
                "sudo pam-auth-update --enable latchkey (Debian), or add `session optional pam_latchkey.so create` "
                    + "after pam_systemd in /etc/pam.d/\(service) (docs/LOGIN.md)")
        }
        guard let password else {
            if unattendedTPM {
                return verdict(
                    .unlockThroughTPM,
                    "this login types no password; the keychain is enrolled for the TPM's unattended unlock", "ok")
            }
            return verdict(
                .lockedWithMessage,
                "this login types no password (no pam_unix.so or other password module in its auth stack), so "
                    + "pam_latchkey says the keychain stays locked",
                "warning",
                "latchkey tpm enroll --unattended --pcrs 7 lets it unlock through the TPM; else `latchkey unlock-keychain` after it"
            )
        }
        guard let latchkeyAuth else {
            return verdict(
                .lockedWithMessage, "no pam_latchkey auth line: libpam wipes the password before the session step",
                "error",
                "add `auth optional pam_latchkey.so` after \(auth[password].module) (\(auth[password].location))")
        }
        if latchkeyAuth < password {
            return verdict(
                .lockedWithMessage,
                "pam_latchkey's auth line (\(auth[latchkeyAuth].location)) comes before \(auth[password].module) "
                    + "(\(auth[password].location)): no password is typed yet", "error",
                "move `auth optional pam_latchkey.so` after \(auth[password].module)")
        }
        var reason =
            "\(auth[password].module) takes the password, pam_latchkey keeps it (\(auth[latchkeyAuth].location)) and unlocks at the session step (\(session[latchkeySession].location))"
        if let systemd = session.firstIndex(where: { $0.module == "pam_systemd.so" }), systemd > latchkeySession {
            reason += "; its session line comes before pam_systemd's, so it uses /run/user/<uid> for XDG_RUNTIME_DIR"
        }
        if service == "sshd" { reason += "; a key login types no password and leaves it locked with the message" }
        return verdict(.unlock, reason, "ok")
    }
}
