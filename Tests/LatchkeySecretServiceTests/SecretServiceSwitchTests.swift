import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// A user switches from GNOME Keyring to Latchkey (`import --from-secret-service`, then latchkeyd takes the
/// name) and back (GNOME Keyring takes the name again, `export --to-secret-service`): nothing is lost either
/// way, and what was stored while on Latchkey goes back too.
@Suite(.serialized, .dedicatedThreads) struct SecretServiceSwitchTests {
    typealias Desktop = SecretServiceTests.Desktop

    /// GNOME Keyring on the desktop's bus, its data in `home` (kept between runs), unlocked at start.
    func startGnomeKeyring(_ desktop: Desktop, home: String) throws -> SpawnedProcess {
        try FileManager.default.createDirectory(
            atPath: home + "/run", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try "gnome password".write(toFile: home + "/password", atomically: true, encoding: .utf8)
        let gnome = try SpawnedProcess(
            "/bin/sh",
            [
                "-c",
                "exec /usr/bin/gnome-keyring-daemon --foreground --unlock --components=secrets < \"$HOME/password\"",
            ],
            environment: [
                "PATH": "/usr/bin:/bin", "HOME": home, "XDG_DATA_HOME": home + "/data",
                "XDG_RUNTIME_DIR": home + "/run",
                "DBUS_SESSION_BUS_ADDRESS": desktop.address,
            ],
            log: desktop.sandbox.directory.file("gnome-keyring.log"))
        try waitUntil("GNOME Keyring to take the name") { try owner(desktop) == "True\n" }
        return gnome
    }

    func owner(_ desktop: Desktop) throws -> String {
        try desktop.python("import dbus; print(dbus.SessionBus().name_has_owner('org.freedesktop.secrets'))").stdout
    }

    func latchkey(_ desktop: Desktop, _ arguments: String...) throws -> HelperProcess.Output {
        try HelperProcess.run(
            HelperProcess.product("latchkey"), arguments + ["-k", desktop.sandbox.keychainPath],
            environment: desktop.sandbox.withPassphrase.merging(["DBUS_SESSION_BUS_ADDRESS": desktop.address]) {
                _, new in new
            })
    }

    func lookups(_ desktop: Desktop) throws -> [String] {
        try [("mail", "alice"), ("web", "bob"), ("chat", "carol")].map { service, user in
            try desktop.secretTool("lookup", "service", service, "user", user).stdout
        }
    }

    @Test func fromGnomeKeyringToLatchkeyAndBackLosesNothing() throws {
        let desktop = try Desktop(startingTheAgent: false)
        let home = desktop.sandbox.directory.file("gnome")
        var gnome = try startGnomeKeyring(desktop, home: home)
        #expect(
            try desktop.secretTool("store", "--label=GK Mail", "service", "mail", "user", "alice", input: "one").status
                == 0)
        #expect(
            try desktop.secretTool("store", "--label=GK Web", "service", "web", "user", "bob", input: "two").status == 0
        )

        // To Latchkey: import while GNOME Keyring runs, then stop it and let latchkeyd take the name.
        let imported = try latchkey(desktop, "import", "--from-secret-service")
        #expect(imported.stdout == "copied 2 items from org.freedesktop.secrets (Login: 2)\n", "\(imported.stderr)")
        gnome.stop()
        try waitUntil("GNOME Keyring to leave the bus") { try owner(desktop) == "False\n" }
        try desktop.sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose", "--secret-service"])
        try desktop.sandbox.unlock()
        #expect(
            try desktop.secretTool("store", "--label=Chat", "service", "chat", "user", "carol", input: "three").status
                == 0)
        #expect(try lookups(desktop) == ["one", "two", "three"])

        // Back: latchkeyd goes, GNOME Keyring takes the name again, and the keychain's items go back to it.
        desktop.sandbox.stop()
        try waitUntil("latchkeyd to leave the bus") { try owner(desktop) == "False\n" }
        gnome = try startGnomeKeyring(desktop, home: home)
        defer { gnome.stop() }
        let exported = try latchkey(desktop, "export", "--to-secret-service")
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.stdout == "copied 1 item to org.freedesktop.secrets\nskipped 2 already there\n")
        #expect(try lookups(desktop) == ["one", "two", "three"])
        let labels = try desktop.python(
            """
            import secretstorage
            bus = secretstorage.dbus_init()
            print(sorted(item.get_label() for item in secretstorage.get_default_collection(bus).get_all_items()))
            """)
        #expect(labels.stdout == "['Chat', 'GK Mail', 'GK Web']\n", "\(labels.stderr)")
        // Again: nothing more to copy.
        let again = try latchkey(desktop, "export", "--to-secret-service")
        #expect(
            again.stdout == "copied 0 items to org.freedesktop.secrets\nskipped 3 already there\n", "\(again.stderr)")
        // The keychain still has everything.
        #expect(
            try desktop.sandbox.cli("dump-keychain").stdout.components(
                separatedBy: "\"svce\"<blob>=\"org.freedesktop.secrets\""
            ).count - 1 == 3)
    }

    @Test func withoutAProviderTheExportFailsAndChangesNothing() throws {
        let desktop = try Desktop(startingTheAgent: false)
        let run = try latchkey(desktop, "export", "--to-secret-service")
        #expect(run.status != 0)
        #expect(
            run.stderr.hasPrefix("latchkey: export: cannot write to the Secret Service org.freedesktop.secrets: "),
            "\(run.stderr)")
    }
}
