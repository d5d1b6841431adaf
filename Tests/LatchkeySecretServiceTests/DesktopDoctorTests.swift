import Foundation
import LatchkeyTestSupport
import Testing

/// `latchkey doctor --desktop` on a desktop with GNOME Keyring, then switched to Latchkey: who holds the name,
/// which activation file wins, the provider's units and autostart entry, the console login's verdict (Debian's
/// stack with Latchkey's profile), the portal, the agent — each problem with its fix, `--json`, and the exit
/// status.
@Suite(.serialized, .dedicatedThreads) struct DesktopDoctorTests {
    /// Debian 12's PAM files with Latchkey's profile applied (Tests/Fixtures/pam.d-debian12).
    static let debian = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/pam.d-debian12").path

    func prepare(_ fixture: DesktopFixture) throws {
        let manager = FileManager.default
        let root = fixture.root
        for directory in ["etc/pam.d", "usr/share/xdg-desktop-portal/portals", "var/lib/dpkg"] {
            try manager.createDirectory(atPath: root + "/" + directory, withIntermediateDirectories: true)
        }
        for name in ["login", "common-auth", "common-session", "common-password", "common-account"] {
            try manager.copyItem(
                atPath: Self.debian + "/" + name, toPath: root + "/etc/pam.d/" + name)
        }
        try "[portal]\nDBusName=org.freedesktop.secrets\nInterfaces=org.freedesktop.impl.portal.Secret\nUseIn=gnome\n"
            .write(
                toFile: root + "/usr/share/xdg-desktop-portal/portals/gnome-keyring.portal", atomically: true,
                encoding: .utf8)
        try """
        Package: xdg-desktop-portal
        Status: install ok installed
        Maintainer: Debian GNOME Maintainers <pkg-gnome-maintainers@lists.alioth.debian.org>
        Architecture: amd64
        Version: 1.16.0-2
        Description: desktop integration portal for Flatpak and Snap


        """.write(
            toFile: root + "/var/lib/dpkg/status", atomically: true, encoding: .utf8)
    }

    @Test func fromGnomeKeyringToLatchkey() throws {
        let fixture = try DesktopFixture()
        try prepare(fixture)
        try fixture.store(1, prefix: "gnome")
        let (home, root) = (fixture.home, fixture.root)
        let common = root + "/etc/pam.d/"
        let login =
            "ok       console login (/etc/pam.d/login): unlock: pam_unix.so takes the password, pam_latchkey keeps it (\(common)common-auth:25) and unlocks at the session step (\(common)common-session:25)"
        let units = """
            ok       GNOME Keyring's unit gnome-keyring-daemon.service (\(root)/usr/lib/systemd/user/gnome-keyring-daemon.service) is not enabled
            ok       GNOME Keyring's unit gnome-keyring-daemon.socket (\(root)/usr/lib/systemd/user/gnome-keyring-daemon.socket) is not enabled
            """
        let before = try fixture.latchkey("doctor", "--desktop")
        #expect(before.status == 0, "\(before.stderr)")
        #expect(
            DesktopSwitchTests.withoutPIDs(before.stdout) == """
                ok       org.freedesktop.secrets: GNOME Keyring holds it (pid N, /usr/bin/gnome-keyring-daemon)
                ok       activation file \(root)/usr/share/dbus-1/services/org.freedesktop.secrets.service starts \(root)/gnome-keyring-activation (the first: the bus uses it)
                \(units)
                ok       GNOME Keyring's autostart entry \(root)/etc/xdg/autostart/gnome-keyring-secrets.desktop is active
                \(login)
                ok       secret portal backends: gnome-keyring.portal; xdg-desktop-portal 1.16.0-2; no portals.conf preference for it; before 1.17 the portal calls whoever holds org.freedesktop.secrets
                warning  latchkeyd does not run for \(fixture.desktop.sandbox.keychainPath)
                         fix: systemctl --user start latchkeyd.socket latchkeyd.service

                """)

        // Switched, but latchkeyd not started yet, and the package's portal file missing: errors, with fixes.
        #expect(try fixture.latchkey("desktop", "enable").status == 0)
        let switched = try fixture.latchkey("doctor", "--desktop")
        #expect(switched.status == 1)
        #expect(
            switched.stdout == """
                ok       org.freedesktop.secrets: no one holds it now; the bus starts the first activation file's provider on the first request
                ok       activation file \(home)/data/dbus-1/services/org.freedesktop.secrets.service starts the unit latchkeyd.service (the first: the bus uses it)
                ok       activation file \(root)/usr/share/dbus-1/services/org.freedesktop.secrets.service starts \(root)/gnome-keyring-activation (shadowed by the first)
                \(units.replacingOccurrences(of: "is not enabled", with: "is not enabled, kept from starting by latchkey desktop's drop-in"))
                ok       GNOME Keyring's autostart entry \(root)/etc/xdg/autostart/gnome-keyring-secrets.desktop is hidden for this user
                \(login)
                ok       secret portal backends: gnome-keyring.portal; xdg-desktop-portal 1.16.0-2; portals.conf prefers latchkey; before 1.17 the portal calls whoever holds org.freedesktop.secrets
                error    latchkey.portal is not in \(root)/usr/share/xdg-desktop-portal/portals
                         fix: reinstall the package (sudo apt install --reinstall latchkey)
                error    latchkeyd does not run for \(fixture.desktop.sandbox.keychainPath)
                         fix: systemctl --user start latchkeyd.socket latchkeyd.service

                """)

        // Fixed: the portal file there, latchkeyd serving the name, unlocked.
        try FileManager.default.copyItem(
            atPath: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("contrib/xdg-desktop-portal/latchkey.portal").path,
            toPath: root + "/usr/share/xdg-desktop-portal/portals/latchkey.portal")
        try fixture.desktop.sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose", "--secret-service"])
        try fixture.desktop.sandbox.unlock()
        let healthy = try fixture.latchkey("doctor", "--desktop", "--json")
        #expect(healthy.status == 0, "\(healthy.stdout)")
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(healthy.stdout.utf8)) as? [String: Any])
        #expect(report["enabled"] as? Bool == true)
        #expect((report["owner"] as? [String: Any])?["provider"] as? String == "Latchkey")
        #expect(report["xdgDesktopPortal"] as? String == "1.16.0-2")
        let logins = try #require(report["logins"] as? [[String: Any]])
        #expect(logins.map { "\($0["service"] ?? "") \($0["outcome"] ?? "")" } == ["login unlock"])
        let findings = try #require(report["findings"] as? [[String: Any]])
        #expect(findings.allSatisfy { $0["level"] as? String == "ok" }, "\(findings)")
        #expect(
            findings.last?["message"] as? String
                == "latchkeyd (pid \(fixture.desktop.sandbox.agent?.pid ?? 0)) serves \(fixture.desktop.sandbox.keychainPath), unlocked"
        )
    }

    @Test func jsonGoesWithDesktop() throws {
        let fixture = try DesktopFixture()
        let run = try fixture.latchkey("doctor", "--json")
        #expect(run.status == 64)
        #expect(
            run.stderr
                == "latchkey: doctor: --json goes with --desktop\nUsage: latchkey doctor [--no-unlock] [keychain] | --desktop [--json]\n"
        )
    }
}
