import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyCLI

/// Each change `latchkey desktop enable` makes is undone exactly: a file the user had is restored, a setting the
/// user had keeps its old value and its neighbours, and what the user changed since is left alone.
@Suite struct DesktopChangeTests {
    let directory = TemporaryDirectory()

    func text(_ name: String) -> String? { FileManager.default.textIfRegularFile(directory.file(name)) }

    @Test func aSettingInTheUsersOwnFileIsRestoredWithItsNeighbours() throws {
        let original =
            "# mine\n[preferred]\ndefault=gnome;gtk;\norg.freedesktop.impl.portal.Secret=gnome-keyring\n\n[other]\nkey=value\n"
        try original.write(toFile: directory.file("portals.conf"), atomically: true, encoding: .utf8)
        var change = DesktopChange(
            kind: .setting, path: directory.file("portals.conf"), content: "latchkey", section: "preferred",
            key: "org.freedesktop.impl.portal.Secret", why: "the portal")
        #expect(try change.apply())
        #expect(
            text("portals.conf")
                == "# mine\n[preferred]\ndefault=gnome;gtk;\norg.freedesktop.impl.portal.Secret=latchkey\n\n[other]\nkey=value\n"
        )
        #expect(try !change.apply(), "in place already: nothing done")
        #expect(try change.undo())
        #expect(text("portals.conf") == original)
    }

    @Test func aSettingInAFileThatWasNotThereGoesWithTheFile() throws {
        var change = DesktopChange(
            kind: .setting, path: directory.file("config/latchkey/latchkeyd.env"), content: "1",
            key: "LATCHKEY_SECRET_SERVICE", why: "on")
        #expect(try change.apply())
        #expect(text("config/latchkey/latchkeyd.env") == "LATCHKEY_SECRET_SERVICE=1\n")
        #expect(try change.undo())
        #expect(!FileManager.default.fileExists(atPath: directory.file("config/latchkey/latchkeyd.env")))
    }

    @Test func anEnvironmentFileKeepsItsOtherLines() throws {
        try "LATCHKEY_SECRET_SERVICE_POLICY=isolated\n".write(
            toFile: directory.file("latchkeyd.env"), atomically: true, encoding: .utf8)
        var change = DesktopChange(
            kind: .setting, path: directory.file("latchkeyd.env"), content: "1", key: "LATCHKEY_SECRET_SERVICE",
            why: "on")
        #expect(try change.apply())
        #expect(text("latchkeyd.env") == "LATCHKEY_SECRET_SERVICE_POLICY=isolated\nLATCHKEY_SECRET_SERVICE=1\n")
        #expect(try change.undo())
        #expect(text("latchkeyd.env") == "LATCHKEY_SECRET_SERVICE_POLICY=isolated\n")
    }

    @Test func aFileTheUserHadIsPutBackAndOneTheyChangedSinceIsLeft() throws {
        try "[D-BUS Service]\nName=org.freedesktop.secrets\nExec=/home/me/bin/mine\n".write(
            toFile: directory.file("org.freedesktop.secrets.service"), atomically: true, encoding: .utf8)
        var change = DesktopChange(
            kind: .link, path: directory.file("org.freedesktop.secrets.service"), content: "/usr/share/x.service",
            why: "activation")
        #expect(try change.apply())
        #expect(FileManager.default.destinationOfSymbolicLinkIfPresent(change.path) == "/usr/share/x.service")
        #expect(change.undoDescription == "restore \(change.path) as it was")
        #expect(try change.undo())
        #expect(text("org.freedesktop.secrets.service")?.contains("Exec=/home/me/bin/mine") == true)

        var drop = DesktopChange(
            kind: .file, path: directory.file("unit.d/latchkey.conf"), content: "[Unit]\n", why: "x")
        #expect(try drop.apply())
        try "[Unit]\n# the user's own line\n".write(toFile: drop.path, atomically: true, encoding: .utf8)
        #expect(try !drop.undo(), "changed since: left as it is")
        #expect(text("unit.d/latchkey.conf") == "[Unit]\n# the user's own line\n")
    }

    /// The other providers are kept from the name by their own files: KWallet's and KeePassXC's settings, oo7's
    /// unit (with a drop-in, like GNOME Keyring's).
    @Test func eachProviderIsKeptFromTheNameByItsOwnFiles() throws {
        let system = TemporaryDirectory()
        try FileManager.default.createDirectory(
            atPath: system.file("usr/lib/systemd/user"), withIntermediateDirectories: true)
        try "[Unit]\n".write(
            toFile: system.file("usr/lib/systemd/user/oo7-daemon.service"), atomically: true, encoding: .utf8)
        let paths = DesktopPaths(environment: ["HOME": directory.path, "LATCHKEY_SYSTEM_ROOT": system.path])
        let describe = { (peer: DesktopPeer) in
            peer.changes(paths, agentUnit: "/usr/lib/systemd/user/latchkeyd.service").map(\.description)
        }
        #expect(
            describe(.kwallet) == [
                "set [org.freedesktop.secrets] apiEnabled=false in \(directory.path)/.config/kwalletrc (turns KWallet's Secret Service off)"
            ])
        #expect(
            describe(.keepassxc) == [
                "set [FdoSecrets] Enabled=false in \(directory.path)/.config/keepassxc/keepassxc.ini (turns KeePassXC's Secret Service off)"
            ])
        #expect(
            describe(.oo7) == [
                "write \(directory.path)/.config/systemd/user/oo7-daemon.service.d/latchkey.conf (keeps oo7's unit oo7-daemon.service from starting while latchkeyd.service is installed)"
            ])
        #expect(DesktopPeer.installed(paths) == [.oo7])
        #expect(DesktopPeer.providing(program: "/usr/bin/ksecretd") == .kwallet)
        #expect(DesktopPeer.providing(program: "/usr/libexec/oo7-daemon") == .oo7)
        #expect(DesktopPeer.providing(program: "/usr/bin/firefox") == nil)
    }
}
