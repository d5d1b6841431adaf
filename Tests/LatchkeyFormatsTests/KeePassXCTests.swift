import Foundation
import LatchkeyEngine
import LatchkeyFormats
import LatchkeyTestSupport
import Testing

/// KeePass databases keepassxc-cli made — KDBX 3.1 (its `db-create`), KDBX 4 (its `import` of XML with a
/// group's custom data), and Argon2d/Argon2id with AES-256 or ChaCha20 (a database Latchkey wrote, saved
/// again by keepassxc-cli with its own writer) — read back entry by entry.
@Suite(.serialized, .dedicatedThreads) struct KeePassXCTests {
    static let password = "keepass password"

    /// A database in KeePass's XML: nested groups, a non-ASCII title, empty fields, custom fields (one
    /// protected), an attachment, and a recycle bin holding an entry.
    static let xml = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <KeePassFile>
          <Meta>
            <Generator>KeePassXC</Generator>
            <DatabaseName>Test</DatabaseName>
            <RecycleBinEnabled>True</RecycleBinEnabled>
            <RecycleBinUUID>AAECAwQFBgcICQoLDA0ODw==</RecycleBinUUID>
            <Binaries><Binary ID="0">aGVsbG8gYXR0YWNobWVudA==</Binary></Binaries>
          </Meta>
          <Root>
            <Group>
              <UUID>EBESExQVFhcYGRobHB0eHw==</UUID>
              <Name>Passwords</Name>
              <CustomData><Item><Key>KDBX4</Key><Value>please</Value></Item></CustomData>
              <Entry>
                <UUID>ICEiIyQlJicoKSorLC0uLw==</UUID>
                <Times><CreationTime>2021-03-04T05:06:07Z</CreationTime><LastModificationTime>2022-03-04T05:06:07Z</LastModificationTime></Times>
                <String><Key>Title</Key><Value>Ünïcødé ✓ 鍵</Value></String>
                <String><Key>UserName</Key><Value></Value></String>
                <String><Key>Password</Key><Value ProtectInMemory="True">pässwörd &amp; &lt;more&gt;</Value></String>
                <String><Key>URL</Key><Value></Value></String>
                <String><Key>Notes</Key><Value>two
        lines</Value></String>
                <String><Key>PIN</Key><Value ProtectInMemory="True">1234</Value></String>
                <String><Key>Color</Key><Value>blue</Value></String>
              </Entry>
              <Group>
                <UUID>MDEyMzQ1Njc4OTo7PD0+Pw==</UUID>
                <Name>Internet</Name>
                <Group>
                  <UUID>QEFCQ0RFRkdISUpLTE1OTw==</UUID>
                  <Name>Mail</Name>
                  <Entry>
                    <UUID>UFFSU1RVVldYWVpbXF1eXw==</UUID>
                    <String><Key>Title</Key><Value>Work</Value></String>
                    <String><Key>UserName</Key><Value>alice@example.com</Value></String>
                    <String><Key>Password</Key><Value ProtectInMemory="True">w0rk</Value></String>
                    <String><Key>URL</Key><Value>https://mail.example.com:8443/inbox?x=1</Value></String>
                    <String><Key>Notes</Key><Value></Value></String>
                    <Binary><Key>notes.txt</Key><Value Ref="0"/></Binary>
                  </Entry>
                </Group>
              </Group>
              <Group>
                <UUID>AAECAwQFBgcICQoLDA0ODw==</UUID>
                <Name>Recycle Bin</Name>
                <Entry>
                  <UUID>YGFiY2RlZmdoaWprbG1ubw==</UUID>
                  <String><Key>Title</Key><Value>Old</Value></String>
                  <String><Key>Password</Key><Value>gone</Value></String>
                </Entry>
              </Group>
            </Group>
          </Root>
        </KeePassFile>

        """

    static let expected = [
        PasswordEntry(
            title: "Ünïcødé ✓ 鍵", password: Data("pässwörd & <more>".utf8), notes: "two\nlines",
            fields: [
                PasswordEntry.Field(name: "PIN", value: "1234", isProtected: true),
                PasswordEntry.Field(name: "Color", value: "blue"),
            ], created: Date(timeIntervalSince1970: 1_614_834_367), modified: Date(timeIntervalSince1970: 1_646_370_367)
        ),
        PasswordEntry(
            title: "Work", groups: ["Internet", "Mail"], username: "alice@example.com", password: Data("w0rk".utf8),
            url: "https://mail.example.com:8443/inbox?x=1"),
    ]

    /// The entries without their times (keepassxc-cli sets those it is not given), fields sorted.
    func comparable(_ entries: [PasswordEntry]) -> [PasswordEntry] {
        entries.map { entry in
            var entry = entry
            if entry.title != "Ünïcødé ✓ 鍵" {
                entry.created = nil
                entry.modified = nil
            }
            entry.fields.sort { $0.name < $1.name }
            return entry
        }.sorted { $0.title < $1.title }
    }

    func read(_ path: String, password: String = password, keyFile: [UInt8]? = nil) throws -> KDBXDatabase {
        try KDBXDatabase.read(
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), password: Passphrase(password), keyFile: keyFile)
    }

    @Test func aKDBX4DatabaseKeePassXCMadeIsReadEntryByEntry() throws {
        let sandbox = try FormatsSandbox()
        let cli = KeePassXCCLI(sandbox: sandbox)
        let path = sandbox.directory.file("four.kdbx")
        try cli.importXML(Self.xml, to: path, password: Self.password)
        let database = try read(path)
        #expect(database.version == "4.0")
        #expect(comparable(database.entries) == comparable(Self.expected))
        #expect(
            database.skipped == [
                SkippedEntry(
                    name: "Internet/Mail/Work (attachment notes.txt)",
                    reason: "an attachment, which a keychain item cannot hold"),
                SkippedEntry(name: "Recycle Bin/Old", reason: "in the recycle bin"),
            ])
    }

    @Test func keePassXCsOwnNewDatabaseIsKDBX31AndOpensWithAKeyFile() throws {
        let sandbox = try FormatsSandbox()
        let cli = KeePassXCCLI(sandbox: sandbox)
        let path = sandbox.directory.file("three.kdbx")
        let key = sandbox.directory.file("three.key")
        let both = "\(Self.password)\n"
        #expect(
            try cli.run(["db-create", "-q", "-p", "--set-key-file", key, "-t", "100", path], input: both + both).status
                == 0)
        #expect(try cli.run(["mkdir", "-q", "-k", key, path, "Internet"], input: both).status == 0)
        #expect(
            try cli.run(
                [
                    "add", "-q", "-k", key, "-u", "bob", "--url", "https://example.org", "--notes", "nöte", "-p", path,
                    "Internet/Example",
                ],
                input: both + "s3cret ✓\n"
            ).status == 0)
        let keyFile = [UInt8](try Data(contentsOf: URL(fileURLWithPath: key)))
        let database = try read(path, keyFile: keyFile)
        #expect(database.version == "3.1")
        #expect(database.keyDerivation.description.hasPrefix("AES-KDF, "))
        #expect(
            database.entries == [
                PasswordEntry(
                    title: "Example", groups: ["Internet"], username: "bob", password: Data("s3cret ✓".utf8),
                    url: "https://example.org", notes: "nöte", created: database.entries.first?.created,
                    modified: database.entries.first?.modified)
            ])
        #expect(throws: KeychainError(.authFailed, "wrong password or key file for the database")) {
            try read(path, keyFile: nil)
        }
        #expect(throws: KeychainError(.authFailed, "wrong password or key file for the database")) {
            try read(path, password: "not it", keyFile: keyFile)
        }
    }

    /// Argon2d and Argon2id: a database Latchkey wrote, to which keepassxc-cli adds an entry — saving it with
    /// its own writer and key derivation (compressed, as it writes them).
    @Test(arguments: ["Argon2d", "Argon2id"])
    func argon2DatabasesKeePassXCSavedAreRead(kdf: String) throws {
        let cipher = KDBXHeader.Cipher.aes256
        let sandbox = try FormatsSandbox()
        let cli = KeePassXCCLI(sandbox: sandbox)
        let path = sandbox.directory.file("argon2.kdbx")
        let derivation = KDBXKeyDerivation.argon2(
            Argon2(variant: kdf == "Argon2d" ? .d : .id, iterations: 2, memoryKiB: 1024, parallelism: 2),
            salt: [UInt8](repeating: 9, count: 32))
        let written = try KDBXWriter.write(
            name: "Latchkey", entries: Self.expected, password: Passphrase(Self.password), keyFile: nil,
            keyDerivation: derivation, cipher: cipher)
        try Data(written.bytes).write(to: URL(fileURLWithPath: path))
        let added = try cli.run(
            ["add", "-q", "-u", "carol", "--url", "https://example.net", "-p", path, "Added"],
            input: "\(Self.password)\nfrom keepassxc\n")
        #expect(added.status == 0, "\(added.stderr)")
        let info = try cli.run(["db-info", "-q", path], input: "\(Self.password)\n").stdout
        #expect(info.contains("Cipher: \(cipher == .aes256 ? "AES 256-bit" : "ChaCha20 256-bit")\n"), "\(info)")
        #expect(info.contains("KDF: \(kdf) (2 rounds, 1024 KB)\n"), "\(info)")
        let database = try read(path)
        #expect(database.version.hasPrefix("4."))
        var expected = Self.expected
        expected.append(
            PasswordEntry(
                title: "Added", username: "carol", password: Data("from keepassxc".utf8), url: "https://example.net"))
        #expect(comparable(database.entries) == comparable(expected))
    }

    /// ChaCha20: keepassxc-cli opens what Latchkey writes. (Debian 12's keepassxc-cli 2.7.4 cannot save a
    /// ChaCha20 database itself — "Writing the database failed Cannot process 0 length data" from its
    /// Botan — so no ChaCha20 file of its own can be read here.)
    @Test func keePassXCOpensAChaCha20DatabaseLatchkeyWrote() throws {
        let sandbox = try FormatsSandbox()
        let cli = KeePassXCCLI(sandbox: sandbox)
        let path = sandbox.directory.file("chacha.kdbx")
        let written = try KDBXWriter.write(
            name: "Latchkey", entries: Self.expected, password: Passphrase(Self.password), keyFile: nil,
            keyDerivation: .argon2(
                Argon2(variant: .id, iterations: 2, memoryKiB: 1024, parallelism: 1),
                salt: [UInt8](repeating: 3, count: 32)),
            cipher: .chacha20)
        try Data(written.bytes).write(to: URL(fileURLWithPath: path))
        let shown = try cli.run(["show", "-q", "-s", path, "Internet/Mail/Work"], input: "\(Self.password)\n")
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(
            shown.stdout.hasPrefix(
                "Title: Work\nUserName: alice@example.com\nPassword: w0rk\nURL: https://mail.example.com:8443/inbox?x=1\n"
            ), "\(shown.stdout)")
        #expect(
            try cli.run(["db-info", "-q", path], input: "\(Self.password)\n").stdout.contains(
                "Cipher: ChaCha20 256-bit\n"))
        #expect(comparable(try read(path).entries) == comparable(Self.expected))
    }

    /// `latchkey import --from kdbx` on keepassxc-cli's database: the report, a second run, a wrong password
    /// (51, nothing written), and a key derivation beyond the limits refused with what to do about it.
    @Test func theCommandImportsKeePassXCsDatabaseOnce() throws {
        let sandbox = try FormatsSandbox()
        let cli = KeePassXCCLI(sandbox: sandbox)
        let path = sandbox.directory.file("four.kdbx")
        try cli.importXML(Self.xml, to: path, password: Self.password)
        let arguments = ["import", "--from", "kdbx", path, "-k", sandbox.keychain]
        let before = try sandbox.dump()
        let wrong = try sandbox.latchkey(arguments, ["LATCHKEY_FILE_PASSPHRASE": "not it"])
        #expect(wrong.status == 51)
        #expect(
            wrong.stderr
                == "latchkey: import: The user name or passphrase you entered is not correct. (wrong password or key file for \(path))\n"
        )
        #expect(try sandbox.dump() == before)
        let first = try sandbox.latchkey(arguments, ["LATCHKEY_FILE_PASSPHRASE": Self.password])
        #expect(
            first.stdout == """
                imported 2 items from \(path) (KDBX 4.0): 1 internet password, 1 generic password
                already in the keychain: 0
                skipped: 2
                  an attachment, which a keychain item cannot hold (1): "Internet/Mail/Work (attachment notes.txt)"
                  in the recycle bin (1): "Recycle Bin/Old"

                """, "\(first.stderr)")
        let second = try sandbox.latchkey(arguments, ["LATCHKEY_FILE_PASSPHRASE": Self.password])
        #expect(second.stdout.hasPrefix("imported 0 items from \(path) (KDBX 4.0)\nalready in the keychain: 2\n"))
        let work = try sandbox.latchkey(["find-internet-password", "-s", "mail.example.com", "-g", sandbox.keychain])
        #expect(work.stdout.contains("\"port\"<uint32>=0x000020FB"), "\(work.stdout)")
        #expect(work.stdout.contains("\"path\"<blob>=\"/inbox?x=1\""), "\(work.stdout)")
        #expect(work.stderr == "password: \"w0rk\"\n")
        // A database asking for 8 GiB of Argon2 memory: refused before any work, with the way round it.
        let costly = sandbox.directory.file("costly.kdbx")
        try Data(
            HostileKDBXTests.header(
                .argon2(
                    Argon2(variant: .d, iterations: 1, memoryKiB: 8 << 20, parallelism: 1),
                    salt: [UInt8](repeating: 1, count: 32)))
        ).write(to: URL(fileURLWithPath: costly))
        let refused = try sandbox.latchkey(
            ["import", "--from", "kdbx", costly, "-k", sandbox.keychain], ["LATCHKEY_FILE_PASSPHRASE": Self.password])
        #expect(refused.status == 206)
        #expect(
            refused.stderr
                == "latchkey: import: One or more parameters passed to a function were not valid. (\(costly) asks for a key derivation of Argon2d, 8192 MiB, 1 iterations, 1 lanes; at most 1024 MiB of Argon2 memory are derived; pass --allow-expensive-kdf to derive it anyway)\n"
        )
    }
}
