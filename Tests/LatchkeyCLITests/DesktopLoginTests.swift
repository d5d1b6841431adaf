import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyCLI

/// What `doctor --desktop` says each login screen's next login will do, read from Debian 12's own PAM files
/// (Tests/Fixtures/pam.d-debian12: the display managers' packages, common-* written by pam-auth-update with
/// Latchkey's profile) — includes, `only_if=` and module order — and from stacks put wrong on purpose.
@Suite struct DesktopLoginTests {
    static let debian = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/pam.d-debian12").path

    func verdicts(_ directory: String, unattendedTPM: Bool = false) -> [String] {
        DesktopLogins.screens.compactMap { service, name in
            PAMStack(service: service, directory: directory).map {
                let verdict = DesktopLogins.verdict($0, name: name, unattendedTPM: unattendedTPM)
                return "\(service): \(verdict.outcome.rawValue) (\(verdict.level))"
            }
        }
    }

    @Test func debiansStacksWithLatchkeysProfile() {
        #expect(
            verdicts(Self.debian) == [
                "gdm-password: unlock (ok)", "gdm-fingerprint: locked-with-message (warning)",
                "gdm-autologin: locked-with-message (warning)", "sddm: unlock (ok)",
                "sddm-autologin: locked-with-message (warning)", "lightdm: unlock (ok)",
                "lightdm-autologin: locked-with-message (warning)", "greetd: unlock (ok)", "login: unlock (ok)",
                "sshd: locked-silently (ok)",
            ])
        #expect(
            verdicts(Self.debian, unattendedTPM: true).filter { $0.contains("fingerprint") || $0.contains("autologin") }
                == [
                    "gdm-fingerprint: unlock-through-tpm (ok)", "gdm-autologin: unlock-through-tpm (ok)",
                    "sddm-autologin: unlock-through-tpm (ok)", "lightdm-autologin: unlock-through-tpm (ok)",
                ])
    }

    @Test func aPasswordLoginSaysWhoTakesThePasswordAndWhere() throws {
        let stack = try #require(PAMStack(service: "gdm-password", directory: Self.debian))
        let verdict = DesktopLogins.verdict(stack, name: "GDM (password)", unattendedTPM: false)
        #expect(
            verdict.reason
                == "pam_unix.so takes the password, pam_latchkey keeps it (\(Self.debian)/common-auth:25) and unlocks at the session step (\(Self.debian)/common-session:25)"
        )
        let fingerprint = try #require(PAMStack(service: "gdm-fingerprint", directory: Self.debian))
        let locked = DesktopLogins.verdict(fingerprint, name: "GDM (fingerprint)", unattendedTPM: false)
        #expect(
            locked.fix
                == "latchkey tpm enroll --unattended --pcrs 7 lets it unlock through the TPM; else `latchkey unlock-keychain` after it"
        )
    }

    /// The stacks people get wrong: lines in the wrong order, the auth line missing, no line at all.
    @Test func wrongStacksAreErrorsWithTheirFix() throws {
        let directory = TemporaryDirectory()
        func write(_ name: String, _ text: String) throws {
            try text.write(toFile: directory.file(name), atomically: true, encoding: .utf8)
        }
        try write(
            "login",
            """
            auth optional pam_latchkey.so
            auth [success=1 default=ignore] pam_unix.so nullok
            auth requisite pam_deny.so
            session optional pam_systemd.so
            session optional pam_latchkey.so
            """)
        try write("lightdm", "auth required pam_unix.so\nsession optional pam_latchkey.so create\n")
        try write("sddm", "auth required pam_unix.so\nsession optional pam_latchkey.so only_if=login\n")
        try write("greetd", "auth include sddm\nsession include sddm\n")
        #expect(
            verdicts(directory.path) == [
                "sddm: locked-silently (error)", "lightdm: locked-with-message (error)",
                "greetd: locked-silently (error)", "login: locked-with-message (error)",
            ])
        let login = DesktopLogins.verdict(
            try #require(PAMStack(service: "login", directory: directory.path)), name: "console login",
            unattendedTPM: false)
        #expect(
            login.reason
                == "pam_latchkey's auth line (\(directory.path)/login:1) comes before pam_unix.so (\(directory.path)/login:2): no password is typed yet"
        )
        #expect(login.fix == "move `auth optional pam_latchkey.so` after pam_unix.so")
        let sddm = DesktopLogins.verdict(
            try #require(PAMStack(service: "sddm", directory: directory.path)), name: "SDDM", unattendedTPM: false)
        #expect(sddm.reason == "its pam_latchkey session line's only_if= leaves sddm out")
    }

    @Test func bracketedControlsAndIncludesAreRead() throws {
        #expect(
            PAMStack.words("auth\t[success=1 default=ignore]  pam_unix.so nullok")
                == ["auth", "[success=1 default=ignore]", "pam_unix.so", "nullok"])
        let stack = try #require(PAMStack(service: "gdm-password", directory: Self.debian))
        #expect(
            stack.lines("session").map(\.module).suffix(3) == [
                "pam_systemd.so", "pam_latchkey.so", "pam_gnome_keyring.so",
            ])
    }
}
