import Foundation
import LatchkeyEngine
import LatchkeyFormats
import LatchkeyTestSupport
import Testing

/// `latchkey import --from` and `export --to` as a script sees them: exact output, exit statuses, usage
/// errors (64 with the usage line), and a keychain unchanged when nothing should change.
@Suite(.dedicatedThreads) struct FormatCommandTests {
    static let bitwarden = """
        folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp
        Work,1,login,Mail,,,0,https://mail.example.com,dave,d4v3,
        Work,,login,Mail again,,,0,https://mail.example.com,dave,other,
        ,,note,Door code,4711,,0,,,,
        ,,card,Visa,,,0,,,,
        ,,identity,Me,,,0,,,,

        """

    @Test func aCSVImportCountsWhatItAddsHasAndSkipsAndIsIdempotent() throws {
        let sandbox = try FormatsSandbox()
        let file = try sandbox.write("bitwarden.csv", Self.bitwarden)
        let before = try sandbox.dump()
        let dry = try sandbox.latchkey(["import", "--from", "csv", file, "--dry-run", "-k", sandbox.keychain])
        let report = """
            imported 2 items from \(file) (Bitwarden): 1 internet password, 1 generic password
            already in the keychain: 0
            skipped: 3
              a kind other than login or note (2): "Visa", "Me"
              another entry of the file has the same account at the same address (1): "Work/Mail again"

            """
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(dry.stdout == report.replacingOccurrences(of: "imported 2", with: "would import 2"))
        #expect(try sandbox.dump() == before)
        let first = try sandbox.latchkey(["import", "--from", "csv", file, "-k", sandbox.keychain])
        #expect(first.stdout == report)
        let second = try sandbox.latchkey(["import", "--from", "csv", file, "-k", sandbox.keychain])
        #expect(
            second.stdout == """
                imported 0 items from \(file) (Bitwarden)
                already in the keychain: 2
                skipped: 3
                  a kind other than login or note (2): "Visa", "Me"
                  another entry of the file has the same account at the same address (1): "Work/Mail again"

                """)
        // The same address and account with another password, in another file: kept out, the keychain's kept.
        let changed = try sandbox.write(
            "changed.csv", "name,url,username,password\nMail,https://mail.example.com,dave,new\n")
        let conflict = try sandbox.latchkey(["import", "--from", "csv", changed, "-k", sandbox.keychain])
        #expect(
            conflict.stdout.hasSuffix(
                "skipped: 1\n  another item of the keychain has the same account at the same address (1): \"Mail\"\n"))
        let password = try sandbox.latchkey([
            "find-internet-password", "-s", "mail.example.com", "-w", sandbox.keychain,
        ])
        #expect(password.stdout == "d4v3\n")
    }

    @Test func anExportLeavesCertificatesBehindAndSaysSo() throws {
        let sandbox = try FormatsSandbox()
        let file = try sandbox.write("chromium.csv", "name,url,username,password\nsite,https://example.com,me,pw\n")
        #expect(try sandbox.latchkey(["import", "--from", "csv", file, "-k", sandbox.keychain]).status == 0)
        let certificate = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/certificates/leaf-ec256.der").path
        let added = try sandbox.latchkey(["import", certificate, "-k", sandbox.keychain])
        #expect(added.status == 0, "\(added.stderr)")
        let out = sandbox.directory.file("out.keyring")
        let exported = try sandbox.latchkey(
            ["export", "--to", "gnome-keyring", "-o", out, "-k", sandbox.keychain], ["LATCHKEY_FILE_PASSPHRASE": "k"])
        #expect(
            exported.stdout
                == "exported 1 item to \(out): 1 internet password\nleft behind: 1 certificate (a keyring file holds passwords only)\n",
            "\(exported.stderr)")
        let keyring = try KeyringFile.read(
            [UInt8](try Data(contentsOf: URL(fileURLWithPath: out))), password: Passphrase("k"))
        #expect(keyring.name == "out")
        #expect(keyring.items.map(\.label) == ["site"])
        #expect(
            keyring.items.first?.attributes == [
                "xdg:schema": "org.gnome.keyring.NetworkPassword", "user": "me", "server": "example.com",
                "protocol": "https",
            ])
        // An existing file is never replaced.
        let again = try sandbox.latchkey(
            ["export", "--to", "gnome-keyring", "-o", out, "-k", sandbox.keychain], ["LATCHKEY_FILE_PASSPHRASE": "k"])
        #expect(again.status == 1)
        #expect(again.stderr == "latchkey: export: \(out) already exists; choose a new file name\n")
    }

    @Test func usageErrorsExitWith64AndTheUsageLine() throws {
        let sandbox = try FormatsSandbox()
        let usage =
            try sandbox.latchkey(["import", "--help"]).stdout.split(separator: "\n").first.map(String.init) ?? ""
        for (arguments, message) in [
            (["import", "--from", "word"], "--from takes gnome-keyring, kdbx, pass or csv, not 'word'"),
            (["import", "--from", "csv"], "--from csv needs the exported file"),
            (["import", "--from", "csv", "--key-file", "k", "f"], "--key-file goes with --from kdbx"),
            (["export", "--to", "word", "-o", "x"], "--to takes kdbx or gnome-keyring, not 'word'"),
            (["export", "--to", "kdbx"], "-o file is required"),
            (
                ["export", "--to", "kdbx", "-o", "x", "--kdf-memory", "2048"],
                "--kdf-memory takes a number from 1 to 1024, not '2048'"
            ),
        ] {
            let run = try sandbox.latchkey(arguments + ["-k", sandbox.keychain])
            #expect(run.status == 64, "\(arguments)")
            let command = arguments[0]
            let line =
                command == "import"
                ? usage
                : try sandbox.latchkey(["export", "--help"]).stdout.split(separator: "\n").first.map(String.init) ?? ""
            #expect(run.stderr == "latchkey: \(command): \(message)\n\(line)\n", "\(arguments)")
        }
    }
}
