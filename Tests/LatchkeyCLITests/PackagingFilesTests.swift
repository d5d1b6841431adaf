import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyCLI

/// The Debian package's own files, checked in the default suite (the package itself is built and installed by
/// `script/package --test`, which takes minutes): the PAM profile names the login screens doctor knows, the
/// maintainer scripts parse, and the packaged unit verifies.
@Suite(.dedicatedThreads) struct PackagingFilesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    func file(_ path: String) throws -> String {
        try String(contentsOf: Self.root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The services of the profile's `only_if=` for one type.
    func services(_ type: String) throws -> [String] {
        let profile = try file("packaging/debian/latchkey.pam-config")
        let block = try #require(profile.components(separatedBy: "\n\(type):\n").dropFirst().first)
        let line = try #require(block.split(separator: "\n").first)
        let only = try #require(line.split(separator: " ").first { $0.hasPrefix("only_if=") })
        return only.dropFirst("only_if=".count).split(separator: ",").map(String.init)
    }

    /// The session line acts for every login screen doctor reads but sshd; the auth line for those that type a
    /// password (the others include no common-auth); the password line for every service (passwd too).
    @Test func theProfileNamesTheLoginScreens() throws {
        let screens = DesktopLogins.screens.map(\.service)
        #expect(try services("Session").sorted() == screens.filter { $0 != "sshd" }.sorted())
        #expect(
            try services("Auth").sorted()
                == screens.filter { !$0.contains("autologin") && !$0.contains("fingerprint") && $0 != "sshd" }.sorted())
        #expect(
            try file("packaging/debian/latchkey.pam-config").contains(
                "Password:\n\toptional\tpam_latchkey.so use_authtok\n"))
        // docs/INSTALL.md prints the lines pam-auth-update writes from it.
        let install = try file("docs/INSTALL.md")
        #expect(install.contains("only_if=" + (try services("Session")).joined(separator: ",") + " create"))
        #expect(install.contains("only_if=" + (try services("Auth")).joined(separator: ",") + "\n"))
    }

    @Test(arguments: ["postinst", "prerm", "postrm"])
    func theMaintainerScriptsParse(_ name: String) throws {
        let path = Self.root.appendingPathComponent("packaging/debian/" + name).path
        let parsed = try HelperProcess.run("/bin/sh", ["-n", path], environment: ["PATH": "/usr/bin:/bin"])
        #expect(parsed.status == 0, "\(parsed.stderr)")
        #expect(FileManager.default.isExecutableFile(atPath: path))
        #expect(try file("packaging/debian/" + name).hasPrefix("#!/bin/sh\nset -e\n"))
    }

    /// The packaged unit, with its ExecStart pointed at this build's latchkeyd, verifies as contrib's does.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"),
            "systemd-analyze is not installed"))
    func thePackagedUnitVerifies() throws {
        let units = TemporaryDirectory()
        let service = try file("packaging/debian/latchkeyd.service")
        #expect(service.contains("\nExecStart=/usr/bin/latchkeyd --verbose --wait-for-keychain 120\n"))
        #expect(
            service.contains(
                "\n[Install]\nAlso=latchkeyd.socket\nWantedBy=default.target\nAlias=dbus-org.freedesktop.secrets.service\n"
            ))
        try service.replacingOccurrences(of: "/usr/bin/latchkeyd", with: HelperProcess.product("latchkeyd")).write(
            toFile: units.file("latchkeyd.service"), atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(
            atPath: Self.root.appendingPathComponent("contrib/systemd/latchkeyd.socket").path,
            toPath: units.file("latchkeyd.socket"))
        try FileManager.default.createDirectory(
            atPath: units.file("run"), withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let output = try HelperProcess.run(
            "/usr/bin/systemd-analyze",
            ["--user", "verify", "--man=no", units.file("latchkeyd.socket"), units.file("latchkeyd.service")],
            environment: ["HOME": units.path, "XDG_RUNTIME_DIR": units.file("run"), "PATH": "/usr/bin:/bin"])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stderr == "")
    }

    @Test func scriptPackageExplainsItself() throws {
        let help = try HelperProcess.run(
            Self.root.appendingPathComponent("script/package").path, ["--help"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(help.status == 0)
        #expect(help.stdout.hasPrefix("Makes the Debian package latchkey_<version>_<arch>.deb"), "\(help.stdout)")
        let wrong = try HelperProcess.run(
            Self.root.appendingPathComponent("script/package").path, ["--bogus"], environment: ["PATH": "/usr/bin:/bin"]
        )
        #expect(wrong.status == 64)
    }
}
