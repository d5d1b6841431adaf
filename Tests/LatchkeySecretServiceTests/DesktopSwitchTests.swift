import Foundation
import LatchkeyTestSupport
import Testing

/// `latchkey desktop enable` from a running GNOME Keyring holding 50 items of every kind, and `disable` back,
/// twice: every item arrives on each side with its label, attributes, content type and secret, what was stored
/// meanwhile goes back, and the user's files end as they began.
@Suite(.serialized, .dedicatedThreads) struct DesktopSwitchTests {
    /// The output with each pid written as N.
    static func withoutPIDs(_ text: String) -> String {
        text.replacingOccurrences(of: #"pid [0-9]+"#, with: "pid N", options: .regularExpression)
    }

    static func enableOutput(_ fixture: DesktopFixture, copied: Int, present: Int) -> String {
        let (home, root) = (fixture.home, fixture.root)
        let unit = root + "/usr/lib/systemd/user/latchkeyd.service"
        return """
            copied \(copied) item\(copied == 1 ? "" : "s") from GNOME Keyring (pid N, /usr/bin/gnome-keyring-daemon) into the keychain\(copied > 0 ? " (Login: \(copied))" : ""), \(present) already there
            write \(home)/config/systemd/user/gnome-keyring-daemon.service.d/latchkey.conf (keeps GNOME Keyring's unit gnome-keyring-daemon.service from starting while latchkeyd.service is installed)
            write \(home)/config/systemd/user/gnome-keyring-daemon.socket.d/latchkey.conf (keeps GNOME Keyring's unit gnome-keyring-daemon.socket from starting while latchkeyd.service is installed)
            write \(home)/config/autostart/gnome-keyring-secrets.desktop (hides GNOME Keyring's autostart entry \(root)/etc/xdg/autostart/gnome-keyring-secrets.desktop)
            link \(home)/config/systemd/user/default.target.wants/latchkeyd.service -> \(unit) (starts latchkeyd.service with the session)
            link \(home)/config/systemd/user/dbus-org.freedesktop.secrets.service -> \(unit) (makes latchkeyd.service the provider of org.freedesktop.secrets)
            link \(home)/data/dbus-1/services/org.freedesktop.secrets.service -> \(root)/usr/share/latchkey/dbus-1/services/org.freedesktop.secrets.service (the bus starts latchkeyd.service for org.freedesktop.secrets, before the system's files)
            set LATCHKEY_SECRET_SERVICE=1 in \(home)/config/latchkey/latchkeyd.env (latchkeyd serves org.freedesktop.secrets)
            set [preferred] org.freedesktop.impl.portal.Secret=latchkey in \(home)/config/xdg-desktop-portal/portals.conf (xdg-desktop-portal 1.17 and later send the secret portal to Latchkey; earlier ones call whoever holds org.freedesktop.secrets)
            stopped pid N, /usr/bin/gnome-keyring-daemon (SIGTERM)
            no systemd user manager answers here: latchkeyd takes org.freedesktop.secrets when it next starts with the Secret Service (log in again)
            recorded in \(home)/state/latchkey/desktop.json; `latchkey desktop disable` undoes it

            """
    }

    static func disableOutput(_ fixture: DesktopFixture, copied: Int, present: Int) -> String {
        let (home, root) = (fixture.home, fixture.root)
        return """
            remove [preferred] org.freedesktop.impl.portal.Secret from \(home)/config/xdg-desktop-portal/portals.conf
            remove LATCHKEY_SECRET_SERVICE from \(home)/config/latchkey/latchkeyd.env
            remove \(home)/data/dbus-1/services/org.freedesktop.secrets.service
            remove \(home)/config/systemd/user/dbus-org.freedesktop.secrets.service
            remove \(home)/config/systemd/user/default.target.wants/latchkeyd.service
            remove \(home)/config/autostart/gnome-keyring-secrets.desktop
            remove \(home)/config/systemd/user/gnome-keyring-daemon.socket.d/latchkey.conf
            remove \(home)/config/systemd/user/gnome-keyring-daemon.service.d/latchkey.conf
            stopped pid N, \(HelperProcess.product("latchkeyd")) (SIGTERM)
            the bus started GNOME Keyring for org.freedesktop.secrets
            copied \(copied) item\(copied == 1 ? "" : "s") into GNOME Keyring (pid N, /usr/bin/gnome-keyring-daemon), \(present) already there
            GNOME Keyring holds org.freedesktop.secrets again; the record \(home)/state/latchkey/desktop.json is removed; the keychain keeps every item

            """
            .replacingOccurrences(of: root + "/", with: root + "/")
    }

    @Test func fiftyItemsOfEveryKindThereAndBackTwice() throws {
        let fixture = try DesktopFixture()
        let before = fixture.userFiles()
        try fixture.store(50, prefix: "gnome")  // The bus starts GNOME Keyring from its system file.
        #expect(try fixture.owner() == "gnome-keyring-daemon")
        var expected = try fixture.items()
        #expect(expected.count == 50)
        for round in 1...2 {
            let enable = try fixture.latchkey("desktop", "enable")
            #expect(enable.status == 0, "round \(round): \(enable.stderr)")
            #expect(
                Self.withoutPIDs(enable.stdout)
                    == Self.enableOutput(
                        fixture, copied: round == 1 ? 50 : 0, present: round == 1 ? 0 : expected.count),
                "round \(round)")
            #expect(try fixture.owner() == "", "round \(round)")
            // As the user's unit would after the next login: latchkeyd with its Secret Service, unlocked.
            try fixture.desktop.sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose", "--secret-service"])
            try fixture.desktop.sandbox.unlock()
            #expect(try fixture.owner() == "latchkeyd")
            let served = try fixture.items()
            #expect(
                served == expected,
                "round \(round): Latchkey serves every item; missing \(Set(expected).subtracting(served).sorted()), more \(Set(served).subtracting(expected).sorted())"
            )
            try fixture.store(5, prefix: "latchkey \(round)")
            expected = try fixture.items()
            #expect(expected.count == 50 + 5 * round)

            let disable = try fixture.latchkey("desktop", "disable")
            #expect(disable.status == 0, "round \(round): \(disable.stderr)")
            #expect(
                Self.withoutPIDs(disable.stdout)
                    == Self.disableOutput(fixture, copied: 5, present: expected.count - 5), "round \(round)")
            #expect(try fixture.owner() == "gnome-keyring-daemon", "round \(round)")
            // GNOME Keyring keeps no content type; everything else of every item is back.
            let back = try fixture.items(contentTypes: false)
            let plain = DesktopFixture.plain(expected)
            #expect(
                back == plain,
                "round \(round): GNOME Keyring has every item; missing \(Set(plain).subtracting(back).sorted()), more \(Set(back).subtracting(plain).sorted())"
            )
            #expect(fixture.userFiles() == before, "round \(round): the user's files as they were")
        }
        // Run again, each is a no-op.
        let again = try fixture.latchkey("desktop", "disable")
        #expect(again.status == 0)
        #expect(
            again.stdout
                == "latchkey desktop is not enabled for this user (no record at \(fixture.home)/state/latchkey/desktop.json); nothing to undo\n"
        )
    }
}
