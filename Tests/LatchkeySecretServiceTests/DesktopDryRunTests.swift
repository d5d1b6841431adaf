import Foundation
import LatchkeyTestSupport
import Testing

/// `latchkey desktop enable --dry-run` and `disable --dry-run` print each step — with the count of items each
/// would move — and change nothing: not a file of the user's, not the keychain, not who holds the name.
@Suite(.serialized, .dedicatedThreads) struct DesktopDryRunTests {
    @Test func eachStepIsPrintedAndNothingChanges() throws {
        let fixture = try DesktopFixture()
        try fixture.store(3, prefix: "gnome")
        let before = fixture.userFiles()
        let enable = try fixture.latchkey("desktop", "enable", "--dry-run")
        #expect(enable.status == 0, "\(enable.stderr)")
        let changes = DesktopSwitchTests.enableOutput(fixture, copied: 0, present: 0).split(separator: "\n")
            .filter { $0.hasPrefix("write ") || $0.hasPrefix("link ") || $0.hasPrefix("set ") }
        #expect(
            DesktopSwitchTests.withoutPIDs(enable.stdout)
                == ([
                    "dry run: nothing is changed",
                    "copy 3 items from GNOME Keyring (pid N, /usr/bin/gnome-keyring-daemon) into the keychain",
                ]
                + changes.map(String.init) + [
                    "copy what GNOME Keyring stored meanwhile, then stop it (pid N, /usr/bin/gnome-keyring-daemon)",
                    "no systemd user manager answers here: latchkeyd takes org.freedesktop.secrets when it next starts with the Secret Service (log in again)",
                ]).joined(separator: "\n") + "\n")
        #expect(fixture.userFiles() == before)
        #expect(try fixture.owner() == "gnome-keyring-daemon")
        let dump = try fixture.desktop.sandbox.cli("dump-keychain")
        #expect(!dump.stdout.contains("org.freedesktop.secrets"), "the keychain holds no item of it")

        // Enabled for real, then the way back printed only.
        #expect(try fixture.latchkey("desktop", "enable").status == 0)
        try fixture.desktop.sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose", "--secret-service"])
        try fixture.desktop.sandbox.unlock()
        let enabled = fixture.userFiles()
        let disable = try fixture.latchkey("desktop", "disable", "--dry-run")
        #expect(disable.status == 0, "\(disable.stderr)")
        let undo = DesktopSwitchTests.disableOutput(fixture, copied: 0, present: 0).split(separator: "\n")
            .filter { $0.hasPrefix("remove ") }
        #expect(
            DesktopSwitchTests.withoutPIDs(disable.stdout)
                == (["dry run: nothing is changed"] + undo.map(String.init) + [
                    "stop latchkeyd's Secret Service (pid N, \(HelperProcess.product("latchkeyd")))",
                    "start GNOME Keyring",
                    "copy 3 items into GNOME Keyring (what it has already is skipped)",
                ]).joined(separator: "\n") + "\n")
        #expect(fixture.userFiles() == enabled)
        #expect(try fixture.owner() == "latchkeyd")
    }
}
