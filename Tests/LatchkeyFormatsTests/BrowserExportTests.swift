import Foundation
import LatchkeyEngine
import LatchkeyFormats
import Testing

/// The exports of Firefox, Chromium and Bitwarden, with the headers and quoting each writes, as entries and
/// as the items those entries become.
@Suite struct BrowserExportTests {
    static let firefox = """
        "url","username","password","httpRealm","formActionOrigin","guid","timeCreated","timeLastUsed","timePasswordChanged"\r
        "https://accounts.example.com","alice","p,w""1",,"https://accounts.example.com","{0b2a5c1e-0000-4000-8000-000000000001}","1700000000000","1700000100000","1700000200000"\r
        "https://intranet.example.org:8443","bob","pw2","Intranet",,"{0b2a5c1e-0000-4000-8000-000000000002}","1600000000000","1600000000000","1600000000000"\r

        """
    static let chromium = """
        name,url,username,password,note
        example.com,https://example.com/login,carol,"c,3","line one
        line two"
        Wi-Fi box,,admin,hunter2,

        """
    static let bitwarden = """
        folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp
        Work/Mail,1,login,Mail,,"PIN: 1234
        Recovery: abc",0,"https://mail.example.com,https://webmail.example.com",dave,d4v3,JBSWY3DPEHPK3PXP
        ,,note,Door code,4711,,0,,,,
        ,,card,Visa,,,0,,,,

        """

    func read(_ text: String) throws -> (BrowserExport, [PasswordEntry], [SkippedEntry]) {
        let read = try BrowserExport.read(Array(text.utf8), what: "export.csv")
        return (read.format, read.entries, read.skipped)
    }

    @Test func firefoxLoginsBecomeInternetPasswordsWithTheirRealmAndTimes() throws {
        let (format, entries, skipped) = try read(Self.firefox)
        #expect(format == .firefox && skipped.isEmpty)
        #expect(entries.count == 2)
        let alice = EntryMapping.item(for: entries[0], group: "latchkey")
        #expect(alice.itemClass == .internetPassword)
        #expect(
            alice.attributes == [
                .accessGroup: .string("latchkey"), .label: .string("accounts.example.com"), .account: .string("alice"),
                .server: .string("accounts.example.com"), .protocol: .string("htps"),
                .creationDate: .date(Date(timeIntervalSince1970: 1_700_000_000)),
                .modificationDate: .date(Date(timeIntervalSince1970: 1_700_000_200)),
            ])
        #expect(alice.data == Data("p,w\"1".utf8))
        let bob = EntryMapping.item(for: entries[1], group: "latchkey")
        #expect(bob.attributes[.port] == .number(8443))
        #expect(bob.attributes[.securityDomain] == .string("Intranet"))
        #expect(bob.attributes[.authenticationType] == .string("http"))
        #expect(bob.attributes[AttributeKey.secretService("URL")] == nil)  // The attributes give it back.
    }

    @Test func chromiumRowsKeepTheirNameAndNote() throws {
        let (format, entries, _) = try read(Self.chromium)
        #expect(format == .chromium)
        let carol = EntryMapping.item(for: entries[0], group: "latchkey")
        #expect(carol.itemClass == .internetPassword)
        #expect(carol.attributes[.label] == .string("example.com"))
        #expect(carol.attributes[.path] == .string("/login"))
        #expect(carol.attributes[.comment] == .string("line one\nline two"))
        // No URL: a generic password named by its label.
        let box = EntryMapping.item(for: entries[1], group: "latchkey")
        #expect(box.itemClass == .genericPassword)
        #expect(box.attributes[.service] == .string("Wi-Fi box"))
        #expect(box.attributes[.account] == .string("admin"))
    }

    @Test func bitwardenFoldersFieldsAndNotesAreKeptAndCardsReported() throws {
        let (format, entries, skipped) = try read(Self.bitwarden)
        #expect(format == .bitwarden)
        #expect(skipped == [SkippedEntry(name: "Visa", reason: "a kind other than login or note")])
        let mail = EntryMapping.item(for: entries[0], group: "latchkey")
        #expect(mail.attributes[.label] == .string("Work/Mail/Mail"))
        #expect(mail.attributes[AttributeKey.secretService("PIN")] == .string("1234"))
        #expect(mail.attributes[AttributeKey.secretService("Recovery")] == .string("abc"))
        #expect(mail.attributes[AttributeKey.secretService("URL 2")] == .string("https://webmail.example.com"))
        #expect(mail.attributes[AttributeKey.secretService("otp")] == .string("JBSWY3DPEHPK3PXP"))
        let note = EntryMapping.item(for: entries[1], group: "latchkey")
        #expect(note.itemClass == .genericPassword)
        #expect(note.attributes[.comment] == .string("4711"))
    }

    @Test func aFileOfOtherColumnsOrARowOfOtherWidthIsReported() throws {
        #expect(
            throws: KeychainError.decode(
                "export.csv is not a password export of Firefox, Chromium or Bitwarden (its first row names other columns)"
            )
        ) { try read("title,secret\na,b\n") }
        let (_, entries, skipped) = try read("name,url,username,password\na,,b\nc,,d,e\n")
        #expect(entries.count == 1)
        #expect(skipped == [SkippedEntry(name: "row 2", reason: "a row of another width than the header")])
    }
}
