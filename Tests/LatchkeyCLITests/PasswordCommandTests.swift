import Foundation
import LatchkeyTestSupport
import Testing

/// add-, find- and delete-*-password through the built binary: exact output, exit statuses, and what the
/// keychain holds afterwards.
@Suite(.dedicatedThreads) struct PasswordCommandTests {
    let sandbox = CLISandbox()

    static let aliceBlock = """
        keychain: "KEYCHAIN"
        version: 512
        class: "genp"
        attributes:
            0x00000007 <blob>="Mail"
            0x00000008 <blob>=<NULL>
            "acct"<blob>="alice"
            "agrp"<blob>="latchkey"
            "cdat"<timedate>=<DATE>
            "crtr"<uint32>="aapl"
            "cusi"<sint32>=<NULL>
            "desc"<blob>="application password"
            "gena"<blob>="extra"
            "icmt"<blob>="work account"
            "invi"<sint32>=<NULL>
            "mdat"<timedate>=<DATE>
            "nega"<sint32>=<NULL>
            "pdmn"<blob>="ak"
            "prot"<blob>=<NULL>
            "scrp"<sint32>=<NULL>
            "svce"<blob>="mail.example.com"
            "sync"<sint32>=0x00000000 
            "type"<uint32>="note"

        """

    @Test func addFindAndDeleteAGenericPassword() throws {
        try sandbox.createKeychain()
        let add = try sandbox.run(
            "add-generic-password", "-a", "alice", "-s", "mail.example.com", "-l", "Mail",
            "-j", "work account", "-D", "application password", "-G", "extra", "-c", "aapl",
            "-C", "note", "-w", "hunter2")
        #expect(add.status == 0)
        #expect(add.stdout == "")
        #expect(
            add.stderr
                == "latchkey: add-generic-password: warning: a password on the command line is visible to other users; put -w last to be prompted, or use --password-fd\n"
        )

        let find = try sandbox.run("find-generic-password", "-a", "alice", "-s", "mail.example.com", "-g")
        #expect(find.status == 0)
        #expect(
            maskingDates(find.stdout)
                == Self.aliceBlock.replacingOccurrences(of: "KEYCHAIN", with: sandbox.defaultKeychain))
        #expect(find.stderr == "password: \"hunter2\"\n")

        let only = try sandbox.run("find-generic-password", "-s", "mail.example.com", "-w")
        #expect(only.status == 0)
        #expect(only.stdout == "hunter2\n")
        #expect(only.stderr == "")

        let delete = try sandbox.run("delete-generic-password", "-a", "alice", "-s", "mail.example.com")
        #expect(delete.status == 0)
        #expect(
            maskingDates(delete.stdout)
                == Self.aliceBlock.replacingOccurrences(of: "KEYCHAIN", with: sandbox.defaultKeychain))
        #expect(delete.stderr == "password has been deleted.\n")

        let gone = try sandbox.run("find-generic-password", "-s", "mail.example.com")
        #expect(gone.status == 44)
        #expect(gone.stdout == "")
        #expect(
            gone.stderr == "latchkey: find-generic-password: The specified item could not be found in the keychain.\n")
        #expect(try sandbox.run("delete-generic-password", "-s", "mail.example.com").status == 44)
    }

    @Test func duplicatesUpdatesAndHex() throws {
        try sandbox.createKeychain()
        #expect(try sandbox.run("add-generic-password", "-a", "a", "-s", "s", "-X", "68756e74657232").status == 0)
        #expect(try sandbox.run("find-generic-password", "-s", "s", "-w").stdout == "hunter2\n")
        let duplicate = try sandbox.run("add-generic-password", "-a", "a", "-s", "s", "-X", "00")
        #expect(duplicate.status == 45)
        #expect(
            duplicate.stderr == "latchkey: add-generic-password: The specified item already exists in the keychain.\n")
        #expect(try sandbox.run("find-generic-password", "-s", "s", "-w").stdout == "hunter2\n")
        // -U updates in place; an odd number of hex digits gets a leading zero, as with security.
        #expect(try sandbox.run("add-generic-password", "-U", "-a", "a", "-s", "s", "-X", "FFF").status == 0)
        #expect(try sandbox.run("find-generic-password", "-s", "s", "-w").stdout == "0fff\n")
        #expect(try sandbox.run("find-generic-password", "-s", "s", "-g").stderr == "password: 0x0FFF \n")
    }

    @Test func passwordsThatAreNotPrintable() throws {
        try sandbox.createKeychain()
        try sandbox.run(
            ["add-generic-password", "-a", "a", "-s", "s", "--password-stdin"], input: Data("caf\u{E9}\n".utf8))
        #expect(try sandbox.run("find-generic-password", "-s", "s", "-w").stdout == "636166c3a9\n")
        #expect(
            try sandbox.run("find-generic-password", "-s", "s", "-g").stderr
                == "password: 0x636166C3A9  \"caf\\303\\251\"\n")
    }

    @Test func internetPasswords() throws {
        try sandbox.createKeychain()
        #expect(
            try sandbox.run(
                "add-internet-password", "-a", "bob", "-s", "example.com", "-r", "htps", "-P", "443",
                "-p", "/login", "-d", "corp", "-t", "form", "--password-stdin", input: "s3cret\n"
            ).status == 0)
        let find = try sandbox.run("find-internet-password", "-s", "example.com", "-P", "443")
        #expect(find.status == 0)
        #expect(
            maskingDates(find.stdout).contains(
                """
                    "path"<blob>="/login"
                    "pdmn"<blob>="ak"
                    "port"<uint32>=0x000001BB 
                    "prot"<blob>=<NULL>
                    "ptcl"<uint32>="htps"
                    "scrp"<sint32>=<NULL>
                    "sdmn"<blob>="corp"
                    "srvr"<blob>="example.com"
                """))
        #expect(try sandbox.run("find-internet-password", "-s", "example.com", "-r", "http").status == 44)
        #expect(try sandbox.run("find-internet-password", "-a", "bob", "-w").stdout == "s3cret\n")
        #expect(try sandbox.run("delete-internet-password", "-s", "example.com").status == 0)
    }

    @Test func latchkeysOwnOptions() throws {
        try sandbox.createKeychain()
        #expect(
            try sandbox.run(
                "add-generic-password", "-a", "a", "-s", "s", "--access-group", "com.example.shared",
                "--accessibility", "after-first-unlock", "--synchronizable", "--password-stdin", input: "x"
            ).status == 0)
        let find = try sandbox.run("find-generic-password", "-s", "s")
        #expect(find.stdout.contains("\"agrp\"<blob>=\"com.example.shared\""))
        #expect(find.stdout.contains("\"pdmn\"<blob>=\"ck\""))
        #expect(find.stdout.contains("\"sync\"<sint32>=0x00000001 "))
        #expect(try sandbox.run("find-generic-password", "-s", "s", "--access-group", "com.example.other").status == 44)
        let bad = try sandbox.run("add-generic-password", "-a", "a", "-s", "t", "--accessibility", "sometimes")
        #expect(bad.status == 64)
        // Stored as Apple stores it: synchronizable and ThisDeviceOnly (it never leaves the device).
        let sync = try sandbox.run(
            "add-generic-password", "-a", "a", "-s", "u", "--accessibility", "aku", "--synchronizable",
            "--password-stdin", input: "y")
        #expect(sync.status == 0, "\(sync.stderr)")
        let found = try sandbox.run("find-generic-password", "-s", "u", "--synchronizable")
        #expect(found.stdout.contains("\"pdmn\"<blob>=\"aku\""), "\(found.stdout)")
        #expect(found.stdout.contains("\"sync\"<sint32>=0x00000001 "))
    }

    @Test func alwaysAvailableItemsNeedNoPassphrase() throws {
        try sandbox.createKeychain()
        try sandbox.run(
            "add-generic-password", "-a", "svc", "-s", "db", "--accessibility", "dk", "--password-stdin",
            input: "pg-pass")
        try sandbox.run("add-generic-password", "-a", "user", "-s", "web", "--password-stdin", input: "web-pass")
        // No LATCHKEY_PASSPHRASE and no terminal: the "always" item is found, the other needs the passphrase.
        let free = try sandbox.run(["find-generic-password", "-s", "db", "-w"], environment: sandbox.environment)
        #expect(free.status == 0)
        #expect(free.stdout == "pg-pass\n")
        let locked = try sandbox.run(["find-generic-password", "-s", "web", "-w"], environment: sandbox.environment)
        #expect(locked.status == 36)
        #expect(locked.stderr.hasPrefix("latchkey: find-generic-password: User interaction is not allowed."))
    }
}
