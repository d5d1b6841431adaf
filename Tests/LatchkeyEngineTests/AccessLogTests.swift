import Foundation
import Latchkey
import LatchkeyEngine
import LatchkeyTestSupport
import Testing

/// The access log (format v6, `access_log`): entries numbered in order and read back as written, sealed (no
/// program, item name or reason in the file, a renumbered row does not open), bounded (the oldest dropped,
/// and counted), readable and writable only after the first unlock.
@Suite struct AccessLogTests {
    let directory = TemporaryDirectory()

    static func entry(_ index: Int, allowed: Bool = true, at time: Date = Date(timeIntervalSince1970: 1_700_000_000))
        -> AccessLogEntry
    {
        AccessLogEntry(
            time: time.addingTimeInterval(Double(index)),
            caller: AccessLogEntry.Caller(
                program: "/usr/bin/reader-program", identity: "executable 01020304…", pid: 4242, uid: 1000,
                frontEnd: "the agent's socket"),
            operation: allowed ? .read : .delete,
            item: AccessLogEntry.Item(
                reference: Data(repeating: UInt8(index % 256), count: 32), itemClass: .genericPassword,
                names: "label=Banking-\(index) service=bank.example account=alice"),
            allowed: allowed, reason: allowed ? "its access groups" : "errSecMissingEntitlement: not registered")
    }

    @Test func entriesAreNumberedAndReadBackAsWritten() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        #expect(try keychain.accessLog().entries.isEmpty)
        let written = (1...3).map { Self.entry($0, allowed: $0 != 2) }
        try keychain.appendToAccessLog(Array(written.prefix(2)))
        try keychain.appendToAccessLog([written[2]])
        let (entries, dropped) = try keychain.accessLog()
        #expect(dropped == 0)
        #expect(entries.map(\.sequence) == [1, 2, 3])
        for (read, wrote) in zip(entries, written) {
            var numbered = wrote
            numbered.sequence = read.sequence
            #expect(read == numbered)
        }
        #expect(try keychain.accessLog { !$0.allowed }.entries.map(\.sequence) == [2])
        #expect(
            try keychain.accessLog(since: Date(timeIntervalSince1970: 1_700_000_002)).entries.map(\.sequence) == [2, 3])
        let anonymous = AccessLogEntry(
            caller: AccessLogEntry.Caller(
                program: "p", identity: "i", pid: nil, uid: nil, frontEnd: "the Secret Service"),
            operation: .addOrUpdate,
            item: AccessLogEntry.Item(reference: nil, itemClass: .internetPassword, names: nil),
            allowed: true, reason: "r")
        try keychain.appendToAccessLog([anonymous])
        let last = try #require(try keychain.accessLog().entries.last)
        #expect(
            last.caller.pid == nil && last.caller.uid == nil && last.item.reference == nil && last.item.names == nil)
    }

    @Test func theOldestAreDroppedAndCounted() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        // Reads wait in the journal; the limit holds once they are folded into the database.
        for index in 1...12 { try keychain.appendToAccessLog([Self.entry(index)], limit: 5) }
        try keychain.foldAccessJournal(limit: 5)
        var (entries, dropped) = try keychain.accessLog()
        #expect(entries.map(\.sequence) == [8, 9, 10, 11, 12])
        #expect(dropped == 7)
        #expect(try RawFile.integer(keychain.path!, "SELECT count(*) FROM access_log") == 5)
        try keychain.appendToAccessLog((13...20).map { Self.entry($0) }, limit: 3)
        try keychain.foldAccessJournal(limit: 3)
        (entries, dropped) = try keychain.accessLog()
        #expect(entries.map(\.sequence) == [18, 19, 20])
        #expect(dropped == 17)
        // Emptied entirely, the numbers still go on (never reused).
        try RawFile.execute(keychain.path!, "DELETE FROM access_log")
        #expect(try keychain.accessLog().dropped == 20)
        try keychain.appendToAccessLog([Self.entry(21)])
        #expect(try keychain.accessLog().entries.map(\.sequence) == [21])
    }

    @Test func theLogIsSealedAndNeedsTheFirstUnlock() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.appendToAccessLog((1...20).map { Self.entry($0) })
        let path = keychain.path!
        #expect(FileManager.default.fileExists(atPath: path + "-accesslog"))
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.file(file)))
            for needle in ["/usr/bin/reader-program", "Banking-1", "bank.example", "its access groups"] {
                #expect(bytes.range(of: Data(needle.utf8)) == nil, "\(needle) is in \(file) in the clear")
            }
        }
        // A row given another number does not open.
        try keychain.foldAccessJournal()
        try RawFile.execute(path, "UPDATE access_log SET seq = 100 WHERE seq = 20")
        let moved = #expect(throws: KeychainError.self) { try keychain.accessLog() }
        #expect(moved?.status == .decode)
        try RawFile.execute(path, "DELETE FROM access_log WHERE seq = 100")

        _ = consume keychain
        let reopened = try KeychainDatabase.open(at: path)
        let locked = #expect(throws: KeychainError.self) { try reopened.accessLog() }
        #expect(locked?.status == .interactionNotAllowed)
        let unwritten = #expect(throws: KeychainError.self) { try reopened.appendToAccessLog([Self.entry(1)]) }
        #expect(unwritten?.status == .interactionNotAllowed)
        try reopened.unlock(with: Passphrase(Fixture.passphrase))
        #expect(try reopened.accessLog().entries.count == 19)
    }
}
