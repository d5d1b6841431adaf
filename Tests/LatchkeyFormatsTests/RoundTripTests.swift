import Foundation
import LatchkeyEngine
import LatchkeyFormats
import LatchkeyTestSupport
import Testing

/// Leaving Latchkey with nothing lost: a keychain of 1,000 passwords (non-ASCII labels, empty fields, notes,
/// internet and generic passwords, secrets that are not text) exported to KDBX, which keepassxc-cli opens and
/// lists entry for entry, and to a login keyring file, which gnome-keyring-daemon unlocks and serves to
/// `secret-tool` and libsecret's clients. LATCHKEY_SOAK=1 makes it 10,000.
@Suite(.serialized, .dedicatedThreads) struct RoundTripTests {
    static let count = ProcessInfo.processInfo.environment["LATCHKEY_SOAK"] == "1" ? 10_000 : 1_000
    static let binaryCount = 10

    /// The entries as a Chromium export: every fourth without a URL, every fifth without a user name, every
    /// seventh without a password, every third with two lines of notes, every label non-ASCII.
    static func rows() -> [(name: String, url: String, user: String, password: String, note: String)] {
        (0..<(count - binaryCount)).map { index in
            (
                name: "Sïte ✓ 鍵 \(index)", url: index % 4 == 0 ? "" : "https://host\(index).example.com/login",
                user: index % 5 == 0 ? "" : "üser\(index)", password: index % 7 == 0 ? "" : "pä$$ \"\(index)\", ok",
                note: index % 3 == 0 ? "line one \(index)\nline two" : ""
            )
        }
    }

    static func csv() -> String {
        func quoted(_ text: String) -> String { "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        return "name,url,username,password,note\n"
            + rows().map { [$0.name, $0.url, $0.user, $0.password, $0.note].map(quoted).joined(separator: ",") }
            .joined(separator: "\n") + "\n"
    }

    static func binarySecret(_ index: Int) -> Data { Data([0, 0xFF, 0xFE, UInt8(index), 0x80, 0x0A]) }

    /// A keychain holding the rows and `binaryCount` generic passwords whose secrets are not UTF-8.
    func filledKeychain(_ sandbox: FormatsSandbox) throws {
        let file = try sandbox.write("export.csv", Self.csv())
        let imported = try sandbox.latchkey(["import", "--from", "csv", file, "-k", sandbox.keychain])
        #expect(imported.status == 0, "\(imported.stderr)")
        let internet = Self.rows().count { !$0.url.isEmpty }
        #expect(
            imported.stdout
                == "imported \(Self.count - Self.binaryCount) items from \(file) (Chromium): \(internet) internet passwords, \(Self.count - Self.binaryCount - internet) generic passwords\nalready in the keychain: 0\nskipped: 0\n"
        )
        for index in 0..<Self.binaryCount {
            let added = try sandbox.latchkey(
                [
                    "add-generic-password", "-s", "bïnary \(index)", "-a", "raw", "-X",
                    Self.binarySecret(index).map { String(format: "%02x", $0) }.joined(), sandbox.keychain,
                ])
            #expect(added.status == 0, "\(added.stderr)")
        }
    }

    @Test func aKeychainLeavesForKeePassXCWithNothingLost() throws {
        let sandbox = try FormatsSandbox()
        try filledKeychain(sandbox)
        let database = sandbox.directory.file("out.kdbx")
        let exported = try sandbox.latchkey(
            [
                "export", "--to", "kdbx", "-o", database, "--kdf-memory", "1", "--kdf-passes", "2", "-k",
                sandbox.keychain,
            ],
            ["LATCHKEY_FILE_PASSPHRASE": "kdbx password"])
        let internet = Self.rows().count { !$0.url.isEmpty }
        #expect(
            exported.stdout
                == "exported \(Self.count) items to \(database): \(internet) internet passwords, \(Self.count - internet) generic passwords\n"
                + "\(Self.binaryCount) secrets that are not text written as the attachment latchkey-secret.bin (KDBX's password field holds text only)\n",
            "\(exported.stderr)")
        // keepassxc-cli opens it and lists every entry; its XML export holds each one's fields.
        let cli = KeePassXCCLI(sandbox: sandbox)
        let listed = try cli.run(["ls", "-q", "-R", "-f", database], input: "kdbx password\n")
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.split(separator: "\n").count { !$0.hasSuffix("/") } == Self.count)
        let xml = try cli.exportXML(database, password: "kdbx password")
        let root = try KeePassXML.parse(Array(xml.utf8), what: "the export") {
            (_: inout [UInt8]) throws(KeychainError) in
        }
        var entries: [String: [String: String]] = [:]
        var attachments: [String: String] = [:]
        func collect(_ group: XMLElement) {
            for entry in group.children("Entry") {
                var fields: [String: String] = [:]
                for string in entry.children("String") {
                    fields[string.child("Key")!.text] = string.child("Value")?.text ?? ""
                }
                entries[fields["Title"] ?? ""] = fields
                for binary in entry.children("Binary") {
                    attachments[fields["Title"] ?? ""] = binary.child("Key")?.text
                }
            }
            for child in group.children("Group") { collect(child) }
        }
        if let top = root.child("Root")?.child("Group") { collect(top) }
        #expect(entries.count == Self.count)
        for row in Self.rows() {
            let entry = entries[row.name]
            #expect(entry?["UserName"] == row.user && entry?["Password"] == row.password, "\(row.name)")
            #expect(entry?["URL"] == row.url && entry?["Notes"] == row.note, "\(row.name)")
        }
        // A secret that is not text is the entry's attachment, byte for byte (its XML export lists the reference
        // only; `attachment-export` to a file gives the bytes).
        for index in 0..<Self.binaryCount {
            #expect(entries["bïnary \(index)"]?["UserName"] == "raw")
            #expect(attachments["bïnary \(index)"] != nil)
            let saved = sandbox.directory.file("attachment-\(index)")
            let exported = try cli.run(
                ["attachment-export", "-q", database, "bïnary \(index)", EntryMapping.binarySecretAttachment, saved],
                input: "kdbx password\n")
            #expect(exported.status == 0, "\(exported.stderr)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: saved)) == Self.binarySecret(index))
        }
        // And back: every entry is the item it came from.
        let back = try sandbox.latchkey(
            ["import", "--from", "kdbx", database, "-k", sandbox.keychain],
            ["LATCHKEY_FILE_PASSPHRASE": "kdbx password"])
        #expect(
            back.stdout.hasSuffix("already in the keychain: \(Self.count)\nskipped: 0\n"),
            "\(back.stdout)\(back.stderr)")
    }

    @Test func aKeychainLeavesForGnomeKeyringWithNothingLost() throws {
        let sandbox = try FormatsSandbox()
        try filledKeychain(sandbox)
        let desktop = try GnomeKeyringDesktop(sandbox: sandbox)
        try FileManager.default.createDirectory(
            atPath: desktop.keyrings, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let file = desktop.keyrings + "/login.keyring"
        let exported = try sandbox.latchkey(
            ["export", "--to", "gnome-keyring", "-o", file, "-k", sandbox.keychain],
            ["LATCHKEY_FILE_PASSPHRASE": desktop.password])
        #expect(exported.status == 0, "\(exported.stderr)")
        try desktop.start()
        #expect(
            try desktop.secretTool("lookup", "server", "host1.example.com", "user", "üser1").stdout == "pä$$ \"1\", ok")
        #expect(
            try desktop.secretTool("lookup", "service", "Sïte ✓ 鍵 4", "account", "üser4").stdout == "pä$$ \"4\", ok")
        #expect(try desktop.secretTool("lookup", "service", "bïnary 3").stdoutBytes == Self.binarySecret(3))
        let script = """
            import base64, json, secretstorage
            bus = secretstorage.dbus_init()
            items = secretstorage.get_default_collection(bus).get_all_items()
            print(json.dumps([[i.get_label(), i.get_attributes(), base64.b64encode(i.get_secret()).decode()] for i in items]))
            """
        let listed = try HelperProcess.run(
            "/usr/bin/python3", ["-c", script], environment: desktop.environment, timeout: 300)
        #expect(listed.status == 0, "\(listed.stderr)")
        let items = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [[Any]] ?? []
        #expect(items.count == Self.count)
        var byLabel: [String: ([String: String], Data)] = [:]
        for item in items {
            guard let label = item[0] as? String, let attributes = item[1] as? [String: String],
                let secret = item[2] as? String
            else { continue }
            byLabel[label] = (attributes, Data(base64Encoded: secret) ?? Data())
        }
        for (index, row) in Self.rows().enumerated() {
            let label = row.name
            guard let (attributes, secret) = byLabel[label] else {
                Issue.record("\(label) is missing")
                continue
            }
            #expect(secret == Data(row.password.utf8), "\(label)")
            if row.url.isEmpty {
                #expect(attributes["service"] == row.name && attributes["account"] == row.user, "\(attributes)")
            } else {
                #expect(
                    attributes["server"] == "host\(index).example.com" && attributes["user"] == row.user
                        && attributes["protocol"] == "https" && attributes["object"] == "/login", "\(attributes)")
            }
            #expect(attributes["latchkey:icmt"] == (row.note.isEmpty ? nil : row.note), "\(attributes)")
        }
        for index in 0..<Self.binaryCount { #expect(byLabel["bïnary \(index)"]?.1 == Self.binarySecret(index)) }
    }
}
