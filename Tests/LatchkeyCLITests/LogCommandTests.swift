import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// `latchkey log` (the agent writes the log; here entries are written straight into the keychain): exact
/// lines and JSON, the dropped count first, the filters, and the refusals of bad options.
@Suite(.dedicatedThreads) struct LogCommandTests {
    let sandbox = CLISandbox()

    func writeEntries() throws {
        let keychain = try KeychainDatabase.open(at: sandbox.defaultKeychain)
        try keychain.unlock(with: Passphrase(CLISandbox.passphrase))
        let caller = AccessLogEntry.Caller(
            program: "/usr/bin/tool", identity: "executable 01020304…", pid: 77, uid: 1000,
            frontEnd: "the agent's socket")
        let item = AccessLogEntry.Item(
            reference: Data(repeating: 0xab, count: 32), itemClass: .genericPassword, names: "service=mail account=a")
        var entries: [AccessLogEntry] = []
        for index in 0..<3 {
            entries.append(
                AccessLogEntry(
                    time: Date(timeIntervalSince1970: 1_764_940_000 + Double(index) + 0.25), caller: caller,
                    operation: .read, item: item, allowed: true, reason: "its access groups"))
        }
        entries.append(
            AccessLogEntry(
                time: Date(timeIntervalSince1970: 1_764_940_010),
                caller: AccessLogEntry.Caller(
                    program: "org.example.App", identity: "flatpak", pid: nil, uid: nil,
                    frontEnd: "the Secret Service"),
                operation: .delete,
                item: AccessLogEntry.Item(reference: nil, itemClass: .internetPassword, names: nil), allowed: false,
                reason: "errSecMissingEntitlement (-34018): no"))
        try keychain.appendToAccessLog(entries, limit: 3)
        // Reads and refusals wait in the journal; the oldest beyond the limit go when it is folded (the agent
        // folds every second).
        try keychain.foldAccessJournal(limit: 3)
    }

    @Test func entriesAreShownFilteredAndAsJSON() throws {
        try sandbox.createKeychain()
        #expect(try sandbox.run("log").stdout == "")
        try writeEntries()
        let reference = String(repeating: "ab", count: 32)
        let read =
            "allowed read genp \(reference) service=mail account=a by /usr/bin/tool (executable 01020304…) pid 77 "
            + "uid 1000 through the agent's socket: its access groups"
        let refused =
            "2025-12-05T13:06:50.000Z refused delete inet - by org.example.App (flatpak) pid ? uid ? through the "
            + "Secret Service: errSecMissingEntitlement (-34018): no"
        #expect(
            try sandbox.run("log").stdout
                == "(1 older entries were dropped)\n2025-12-05T13:06:41.250Z \(read)\n2025-12-05T13:06:42.250Z \(read)\n"
                + refused + "\n")
        #expect(try sandbox.run("log", "--item", reference).stdout.split(separator: "\n").count == 3)
        #expect(
            try sandbox.run("log", "--program", "org.example.App").stdout
                == "(1 older entries were dropped)\n\(refused)\n")
        #expect(
            try sandbox.run("log", "--since", "2025-12-05T13:06:42Z", "--program", "/usr/bin/tool").stdout.count > 0)
        #expect(
            try sandbox.run("log", "--since", "2025-12-05T13:06:43Z", "--program", "/usr/bin/tool").stdout
                == "(1 older entries were dropped)\n")
        let json = try sandbox.run("log", "--json", "--program", "org.example.App").stdout
        // Unknown values (no pid, no reference) are left out.
        #expect(
            json
                == #"{"dropped":1,"entries":[{"allowed":false,"frontEnd":"the Secret Service","identity":"flatpak","#
                + #""itemClass":"inet","operation":"delete","program":"org.example.App","#
                + #""reason":"errSecMissingEntitlement (-34018): no","sequence":4,"time":"2025-12-05T13:06:50.000Z"}]}"#
                + "\n")
    }

    @Test func badOptionsAreRefused() throws {
        try sandbox.createKeychain()
        let since = try sandbox.run("log", "--since", "yesterday")
        #expect(since.status == 64)
        #expect(
            since.stderr.contains(
                "--since takes an ISO 8601 time (2026-12-05T13:00:00Z) or a duration (90s, 10m, 2h, 7d), not 'yesterday'"
            ))
        let item = try sandbox.run("log", "--item", "abc")
        #expect(item.status == 64)
        #expect(item.stderr.contains("'abc' is not an item's persistent reference (64 hex digits)"))
        #expect(try sandbox.run("log", "extra").status == 64)
        let wrong = try sandbox.run(
            ["log"], environment: sandbox.environment.merging(["LATCHKEY_PASSPHRASE": "no"]) { _, new in new })
        #expect(wrong.status == 51, "a wrong passphrase: \(wrong.stderr)")
    }
}
