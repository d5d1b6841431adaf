import Foundation
import Testing

@testable import LatchkeyCLI

/// The tool's text layout without `String(format:)`, `padding(toLength:)`, regular expressions from
/// Foundation or `DateFormatter`: each piece gives what the Foundation call it replaced gave.
@Suite struct TextLayoutTests {
    @Test func paddedColumnsMatchFoundation() {
        for text in ["", "ok", "warning", "exactly8", "longer than eight"] {
            #expect(text.padded(to: 8) == text.padding(toLength: 8, withPad: " ", startingAt: 0), "\(text)")
        }
    }

    @Test func fixedWidthNumbersMatchStringFormat() {
        for number in [0, 7, 42, 999, 1_000, 65_535] {
            #expect(String(number).leftPadded(to: 3) + ") " == String(format: "%3d) ", number))
            #expect(number.digits(4) == String(format: "%04d", number))
            #expect(number.digits(4, radix: 16) == String(format: "%04X", number))
        }
        for byte in [UInt8(0), 7, 8, 127, 255] {
            #expect("\\" + byte.digits(3, radix: 8) == String(format: "\\%03o", byte))
        }
    }

    @Test func groupedDigits() {
        #expect(0.grouped == "0")
        #expect(999.grouped == "999")
        #expect(1_000.grouped == "1,000")
        #expect(1_234_567.grouped == "1,234,567")
        #expect((-12_345).grouped == "-12,345")
    }

    /// What the Foundation version of `redacted` gave (NSRegularExpression), to compare with.
    private static func foundationRedacted(_ conninfo: String) -> String {
        conninfo.replacingOccurrences(
            of: #"password\s*=\s*('([^'\\]|\\.)*'|\S+)"#, with: "password=…", options: .regularExpression
        ).replacingOccurrences(of: #"(postgres(ql)?://[^:/@]+):[^@]*@"#, with: "$1:…@", options: .regularExpression)
    }

    @Test func aConnectionStringLosesItsPassword() {
        #expect(SyncCommands.redacted("host=db password=hunter2 user=me") == "host=db password=… user=me")
        #expect(SyncCommands.redacted("postgresql://me:hunter2@db/latchkey") == "postgresql://me:…@db/latchkey")
        for conninfo in [
            "host=/run/pg password='it''s \\' secret' dbname=latchkey", "password = 'a b' host=x", "password=",
            "postgres://db/latchkey", "postgres://me:p:w@db/x?password=y", "host=x", "PASSWORD=upper",
        ] {
            #expect(SyncCommands.redacted(conninfo) == Self.foundationRedacted(conninfo), "\(conninfo)")
        }
    }

    @Test func datesForVerifyCertAreReadInUTC() throws {
        let day = try #require(IdentityCommands.parseDate("2020-06-01"))
        #expect(day.timeIntervalSince1970 == 1_590_969_600)
        let moment = try #require(IdentityCommands.parseDate("2020-06-01-12:00:30"))
        #expect(moment.timeIntervalSince1970 == 1_591_012_830)
        for bad in [
            "yesterday", "2020-13-01", "2020-02-30", "2020-06-01-24:00:00", "2020-06", "2020-06-01-12:00", "-06-01",
        ] {
            #expect(IdentityCommands.parseDate(bad) == nil, "\(bad)")
        }
    }

    @Test func pathsToPasteAreQuotedOnlyWhenNeeded() {
        #expect(
            DoctorCommand.shellQuoted("/home/me/.local/share/latchkey/login.keychain")
                == "/home/me/.local/share/latchkey/login.keychain")
        #expect(DoctorCommand.shellQuoted("/tmp/it's here") == #"'/tmp/it'\''s here'"#)
        #expect(DoctorCommand.shellQuoted("/tmp/é") == "'/tmp/é'")
        #expect(DoctorCommand.shellQuoted("") == "''")
    }
}
