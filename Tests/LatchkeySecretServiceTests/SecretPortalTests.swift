import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// The secret portal's backend (`org.freedesktop.impl.portal.Secret.RetrieveSecret`), called as
/// xdg-desktop-portal calls it: a request handle, the sandboxed app's ID, the writing end of a pipe and no
/// options; the app's secret comes out of the pipe's other end.
@Suite(.serialized, .dedicatedThreads) struct SecretPortalTests {
    typealias Desktop = SecretServiceTests.Desktop

    /// `retrieve <app id> [read-end]`: prints the response, the number of results and the secret in hex (or
    /// the D-Bus error's name).
    static let retrieve = """
        import os, sys, dbus
        bus = dbus.SessionBus()
        portal = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/portal/desktop"), "org.freedesktop.impl.portal.Secret")
        for app in sys.argv[1:]:
            read_end, write_end = os.pipe()
            given = read_end if app.startswith("readonly:") else write_end
            app = app.removeprefix("readonly:")
            handle = dbus.ObjectPath("/org/freedesktop/portal/desktop/request/1_23/t" + str(os.getpid()))
            try:
                response, results = portal.RetrieveSecret(handle, app, dbus.types.UnixFd(given), dbus.Dictionary({}, signature="sv"))
                os.close(write_end)
                secret = b""
                while True:
                    chunk = os.read(read_end, 4096)
                    if not chunk: break
                    secret += chunk
                print(app, int(response), len(results), len(secret), secret.hex())
            except dbus.exceptions.DBusException as failure:
                print(app, failure.get_dbus_name())
                os.close(write_end)
            os.close(read_end)
        """

    func retrieve(_ desktop: Desktop, _ apps: String...) throws -> [String] {
        let run = try desktop.run("/usr/bin/python3", ["-c", Self.retrieve] + apps)
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout.split(separator: "\n").map(String.init)
    }

    /// The secret in a line `app 0 0 64 <hex>`, or nil.
    func secret(_ line: String) -> String? {
        let words = line.split(separator: " ")
        guard words.count == 5, words[1] == "0", words[2] == "0", words[3] == "64" else { return nil }
        return String(words[4])
    }

    func items(_ desktop: Desktop) throws -> String {
        try desktop.sandbox.cli("show-keychain-info").stdout.split(separator: "\n").first { $0.hasPrefix("items: ") }
            .map(String.init) ?? ""
    }

    @Test func theSameAppGetsTheSameSecretAndAnotherAppAnother() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        let first = try retrieve(desktop, "org.example.Mail", "org.example.Mail", "org.example.Chat")
        #expect(first.count == 3, "\(first)")
        let mail = try #require(secret(first[0]), "\(first)")
        #expect(secret(first[1]) == mail)
        let chat = try #require(secret(first[2]))
        #expect(chat != mail)
        // Byte-identical after a restart.
        desktop.sandbox.stop()
        try desktop.sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose", "--secret-service"])
        try desktop.sandbox.unlock()
        let again = try retrieve(desktop, "org.example.Mail", "org.example.Chat")
        #expect(again.map(secret) == [mail, chat])
        #expect(desktop.sandbox.agentLog.contains("made the secret portal's secret for org.example.Mail"))
        // Nowhere in the keychain's files in the clear.
        let mailBytes = Data(
            stride(from: 0, to: mail.count, by: 2).map { UInt8(mail.dropFirst($0).prefix(2), radix: 16)! })
        for name in try FileManager.default.contentsOfDirectory(
            atPath: URL(fileURLWithPath: desktop.sandbox.keychainPath).deletingLastPathComponent().path)
        {
            let bytes = try Data(
                contentsOf: URL(fileURLWithPath: desktop.sandbox.keychainPath).deletingLastPathComponent()
                    .appendingPathComponent(name))
            #expect(bytes.range(of: mailBytes) == nil, "\(name)")
        }
    }

    @Test func theSecretIsTheSameAfterABackupIsRestoredIntoANewKeychain() throws {
        let desktop = try Desktop()
        let sandbox = desktop.sandbox
        try sandbox.unlock()
        let mail = try #require(secret(try retrieve(desktop, "org.example.Mail")[0]))
        sandbox.stop()
        let backup = sandbox.directory.file("portal.backup")
        var environment = sandbox.withPassphrase
        environment["LATCHKEY_BACKUP_PASSPHRASE"] = "backup passphrase"
        let latchkey = HelperProcess.product("latchkey")
        #expect(try HelperProcess.run(latchkey, ["export", "-o", backup], environment: environment).status == 0)
        // A new keychain in its place (another machine), and the backup restored into it.
        #expect(
            try HelperProcess.run(latchkey, ["delete-keychain", sandbox.keychainPath], environment: environment).status
                == 0)
        #expect(
            try HelperProcess.run(
                latchkey, ["create-keychain", "--kdf-memory", "19", "--kdf-passes", "2", sandbox.keychainPath],
                environment: environment
            ).status == 0)
        let restored = try HelperProcess.run(
            latchkey, ["import", "-i", backup, sandbox.keychainPath], environment: environment)
        #expect(restored.stdout == "added 1, updated 0, skipped 0\n", "\(restored.stderr)")
        try sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose", "--secret-service"])
        try sandbox.unlock()
        #expect(secret(try retrieve(desktop, "org.example.Mail")[0]) == mail)
    }

    @Test func noSecretServiceClientSeesTheAppsSecrets() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        #expect(secret(try retrieve(desktop, "org.example.Mail")[0]) != nil)
        // libsecret, secretstorage: no item anywhere.
        let listed = try desktop.python(
            """
            import secretstorage
            bus = secretstorage.dbus_init()
            print(sum(len(list(c.get_all_items())) for c in secretstorage.get_all_collections(bus)))
            """)
        #expect(listed.stdout == "0\n", "\(listed.stderr)")
        #expect(
            try desktop.secretTool("search", "--all", "xdg:schema", "org.freedesktop.impl.portal.Secret").stdout == "")
        // It is a keychain item of the portal's own group.
        #expect(try items(desktop) == "items: 1")
    }

    @Test func aBadDescriptorOrAppIDIsAnErrorAndStoresNothing() throws {
        let desktop = try Desktop()
        try desktop.sandbox.unlock()
        let before = try items(desktop)
        let answers = try retrieve(
            desktop, "", "org", "org.example.1Bad", "org..example", "org.example/evil", "readonly:org.example.Mail")
        #expect(
            answers == [
                " org.freedesktop.DBus.Error.InvalidArgs", "org org.freedesktop.DBus.Error.InvalidArgs",
                "org.example.1Bad org.freedesktop.DBus.Error.InvalidArgs",
                "org..example org.freedesktop.DBus.Error.InvalidArgs",
                "org.example/evil org.freedesktop.DBus.Error.InvalidArgs",
                "org.example.Mail org.freedesktop.DBus.Error.InvalidArgs",
            ])
        #expect(try items(desktop) == before)
        #expect(!desktop.sandbox.agentLog.contains("made the secret portal's secret"))
    }

    @Test func aLockedKeychainIsAnErrorAndStoresNothing() throws {
        let desktop = try Desktop()
        #expect(try retrieve(desktop, "org.example.Mail") == ["org.example.Mail org.freedesktop.Secret.Error.IsLocked"])
        try desktop.sandbox.unlock()
        #expect(try items(desktop) == "items: 0")
    }

    @Test func thePortalFileNamesTheBackend() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let portal = try String(
            contentsOf: root.appendingPathComponent("contrib/xdg-desktop-portal/latchkey.portal"), encoding: .utf8)
        #expect(
            portal.contains(
                "[portal]\nDBusName=org.freedesktop.secrets\nInterfaces=org.freedesktop.impl.portal.Secret\n"))
        let desktop = try Desktop()
        let introspected = try desktop.python(
            """
            import dbus
            print(dbus.Interface(dbus.SessionBus().get_object("org.freedesktop.secrets", "/org/freedesktop/portal/desktop"), "org.freedesktop.DBus.Properties").Get("org.freedesktop.impl.portal.Secret", "version"))
            """)
        #expect(introspected.stdout == "1\n", "\(introspected.stderr)")
    }
}
