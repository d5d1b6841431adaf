import Foundation
import LatchkeyEngine
import LatchkeyFormats
import LatchkeyTestSupport
import Testing

/// Keyring files gnome-keyring-daemon wrote (items stored through `secret-tool`), read with the daemon
/// stopped: by `KeyringFile` and by `latchkey import --from gnome-keyring`, which stores them as
/// `import --from-secret-service` would have — the two imports agree item for item.
@Suite(.serialized, .dedicatedThreads) struct GnomeKeyringDaemonTests {
    static let binary = Data([0, 1, 0xFE, 0xFF, 0x0A])

    /// The daemon's login keyring with three items: a plain one, a non-ASCII label with an empty secret's
    /// neighbour, and an empty label over a binary secret.
    func storeItems(_ desktop: GnomeKeyringDesktop) throws {
        #expect(
            try desktop.secretTool("store", "--label=Mail", "service", "mail", "user", "alice", input: Data("one".utf8))
                .status == 0)
        #expect(
            try desktop.secretTool(
                "store", "--label=Ünïcode ✓ 鍵", "service", "wéb", "user", "bøb", input: Data("zwei".utf8)
            )
            .status == 0)
        #expect(
            try desktop.secretTool("store", "--label=", "service", "bin", "user", "", input: Self.binary).status == 0)
    }

    @Test func filesTheDaemonWroteAreReadWithoutIt() throws {
        let sandbox = try FormatsSandbox()
        let desktop = try GnomeKeyringDesktop(sandbox: sandbox)
        try desktop.start()
        try storeItems(desktop)
        try desktop.stop()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: desktop.keyrings + "/login.keyring")))
        let keyring = try KeyringFile.read(bytes, password: Passphrase(desktop.password))
        #expect(keyring.name == "Login")
        let items = keyring.items.sorted { $0.label < $1.label }
        #expect(items.map(\.label) == ["", "Mail", "Ünïcode ✓ 鍵"])
        #expect(items.map(\.secret) == [Self.binary, Data("one".utf8), Data("zwei".utf8)])
        let schema = "org.freedesktop.Secret.Generic"
        #expect(
            items.map(\.attributes) == [
                ["service": "bin", "user": "", "xdg:schema": schema],
                ["service": "mail", "user": "alice", "xdg:schema": schema],
                ["service": "wéb", "user": "bøb", "xdg:schema": schema],
            ])
        #expect(
            throws: KeychainError(.authFailed, "wrong password for the keyring file (or its encrypted part is damaged)")
        ) {
            try KeyringFile.read(bytes, password: Passphrase("not it"))
        }
    }

    @Test func theImportIsIdempotentWritesNothingOnAWrongPasswordAndAgreesWithTheSecretServiceImport() throws {
        let sandbox = try FormatsSandbox()
        let desktop = try GnomeKeyringDesktop(sandbox: sandbox)
        try desktop.start()
        try storeItems(desktop)
        try desktop.stop()
        let file = desktop.keyrings + "/login.keyring"
        let before = try sandbox.dump()
        // A wrong password: exit 51, the keychain unchanged.
        let wrong = try sandbox.latchkey(
            ["import", "--from", "gnome-keyring", "-k", sandbox.keychain], ["LATCHKEY_FILE_PASSPHRASE": "not it"])
        #expect(wrong.status == 51)
        #expect(
            wrong.stderr
                == "latchkey: import: The user name or passphrase you entered is not correct. (\(file): wrong password for the keyring file (or its encrypted part is damaged))\n"
        )
        #expect(try sandbox.dump() == before)
        // The keyrings directory in the home, found without naming it.
        let dry = try sandbox.latchkey(
            ["import", "--from", "gnome-keyring", "--dry-run", "-k", sandbox.keychain],
            ["LATCHKEY_FILE_PASSPHRASE": desktop.password])
        #expect(
            dry.stdout
                == """
                keyring "Login" (\(file)): 3 items
                would import 3 items from \(file): 3 generic passwords
                already in the keychain: 0
                skipped: 0

                """, "\(dry.stderr)")
        #expect(try sandbox.dump() == before)
        let first = try sandbox.latchkey(
            ["import", "--from", "gnome-keyring", desktop.keyrings, "-k", sandbox.keychain],
            ["LATCHKEY_FILE_PASSPHRASE": desktop.password])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(
            first.stdout
                == "keyring \"Login\" (\(file)): 3 items\nimported 3 items from \(file): 3 generic passwords\n"
                + "already in the keychain: 0\nskipped: 0\n")
        let second = try sandbox.latchkey(
            ["import", "--from", "gnome-keyring", file, "-k", sandbox.keychain],
            ["LATCHKEY_FILE_PASSPHRASE": desktop.password])
        #expect(
            second.stdout.hasSuffix("imported 0 items from \(file)\nalready in the keychain: 3\nskipped: 0\n"),
            "\(second.stdout)")
        // The daemon, started again on the same file, serves the same items: the Secret Service import finds
        // every one of them in the keychain already.
        try desktop.start()
        let viaBus = try sandbox.latchkey(
            ["import", "--from-secret-service", "-k", sandbox.keychain], ["DBUS_SESSION_BUS_ADDRESS": desktop.address])
        #expect(
            viaBus.stdout == "copied 0 items from org.freedesktop.secrets\nskipped 3 already in the keychain\n",
            "\(viaBus.stderr)")
        let dump = try sandbox.dump()
        #expect(dump.contains("\"ss.user\"<blob>=\"bøb\"") || dump.contains("\"ss.user\"<blob>=0x"), "\(dump)")
        #expect(dump.components(separatedBy: "\"svce\"<blob>=\"org.freedesktop.secrets\"").count - 1 == 3)
    }
}
