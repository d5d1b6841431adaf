import Foundation
import Latchkey
import LatchkeyEngine
import LatchkeyTestSupport
import Testing

/// The access log's journal (`<keychain>-accesslog`): reads and refusals are appended there, numbered and
/// sealed as their rows will be, and folded into `access_log`; changes go to the database at once. Readers see
/// both; a record cut short by a crash is ignored and cut off; a fold cut short adds nothing twice; a damaged
/// record is `errSecDecode`.
@Suite struct AccessJournalTests {
    let directory = TemporaryDirectory()

    static func read(_ index: Int) -> AccessLogEntry { AccessLogTests.entry(index) }
    /// A deletion allowed: an entry that records a change.
    static func change(_ index: Int) -> AccessLogEntry {
        var entry = AccessLogTests.entry(index)
        entry.operation = .delete
        return entry
    }

    func rows(_ keychain: KeychainDatabase) throws -> Int64 {
        try RawFile.integer(keychain.path!, "SELECT count(*) FROM access_log") ?? -1
    }

    @Test func readsWaitInTheJournalChangesGoToTheDatabaseAndAFoldMovesThem() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let journal = keychain.path! + "-accesslog"
        try keychain.appendToAccessLog([Self.read(1), Self.read(2)])
        try keychain.appendToAccessLog([Self.change(3)])
        try keychain.appendToAccessLog([Self.read(4)])
        #expect(try rows(keychain) == 1)
        #expect(FileManager.default.fileExists(atPath: journal))
        let before = try keychain.accessLog()
        #expect(before.entries.map(\.sequence) == [1, 2, 3, 4])
        #expect(before.entries.map(\.operation) == [.read, .read, .delete, .read])
        #expect(before.dropped == 0)

        try keychain.foldAccessJournal()
        #expect(try rows(keychain) == 4)
        #expect(!FileManager.default.fileExists(atPath: journal))
        #expect(!FileManager.default.fileExists(atPath: journal + "-fold"))
        #expect(try keychain.accessLog().entries == before.entries)
        // Nothing to fold: nothing happens.
        try keychain.foldAccessJournal()
        #expect(try rows(keychain) == 4)

        // Numbers go on after a reopen, from the database and the journal alike.
        try keychain.appendToAccessLog([Self.read(5)])
        _ = consume keychain
        let reopened = try KeychainDatabase.open(at: directory.file("test.keychain"))
        try reopened.unlock(with: Passphrase(Fixture.passphrase))
        try reopened.appendToAccessLog([Self.read(6)])
        #expect(try reopened.accessLog().entries.map(\.sequence) == [1, 2, 3, 4, 5, 6])
    }

    @Test func aRecordCutShortIsIgnoredAndCutOffAtTheNextAppend() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let journal = keychain.path! + "-accesslog"
        try keychain.appendToAccessLog([Self.read(1), Self.read(2)])
        let whole = try Data(contentsOf: URL(fileURLWithPath: journal))
        // A crash in the middle of the second record's write.
        try whole.prefix(whole.count - 10).write(to: URL(fileURLWithPath: journal))
        #expect(try keychain.accessLog().entries.map(\.sequence) == [1])

        // Another process (the agent after the crash) appends: the cut record goes, and its number — never
        // answered for — is the next entry's.
        let reopened = try KeychainDatabase.open(at: keychain.path!)
        try reopened.unlock(with: Passphrase(Fixture.passphrase))
        try reopened.appendToAccessLog([Self.read(3)])
        let entries = try reopened.accessLog().entries
        #expect(entries.map(\.sequence) == [1, 2])
        #expect(entries.last?.item.names == "label=Banking-3 service=bank.example account=alice")
        #expect(try Data(contentsOf: URL(fileURLWithPath: journal)).count == whole.count)
        try reopened.foldAccessJournal()
        #expect(try rows(reopened) == 2)
    }

    @Test func aFoldCutShortAddsNothingTwice() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let journal = keychain.path! + "-accesslog"
        try keychain.appendToAccessLog((1...3).map { Self.read($0) })
        let records = try Data(contentsOf: URL(fileURLWithPath: journal))
        try keychain.foldAccessJournal()
        // As if the fold had crashed after its commit, before removing its file: the file is there again, and
        // new reads wait in a new journal.
        try records.write(to: URL(fileURLWithPath: journal + "-fold"))
        try keychain.appendToAccessLog([Self.read(4)])
        #expect(try keychain.accessLog().entries.map(\.sequence) == [1, 2, 3, 4])
        try keychain.foldAccessJournal()  // The leftover first,
        #expect(try rows(keychain) == 3)
        #expect(!FileManager.default.fileExists(atPath: journal + "-fold"))
        try keychain.foldAccessJournal()  // then the journal.
        #expect(try rows(keychain) == 4)
        #expect(try keychain.accessLog().entries.map(\.sequence) == [1, 2, 3, 4])
    }

    @Test func aDamagedRecordIsADecodeError() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let journal = keychain.path! + "-accesslog"
        try keychain.appendToAccessLog([Self.read(1)])
        var bytes = try Data(contentsOf: URL(fileURLWithPath: journal))
        bytes[bytes.count - 1] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: journal))
        let damaged = #expect(throws: KeychainError.self) { try keychain.accessLog() }
        #expect(damaged?.status == .decode)
        #expect(damaged?.message.contains("entry 1 of the access log is damaged") == true)
    }

    @Test func theJournalHoldsNothingInTheClearAndGoesWithTheKeychain() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let path = keychain.path!
        try keychain.appendToAccessLog((1...5).map { Self.read($0) })
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path + "-accesslog"))
        for needle in ["/usr/bin/reader-program", "Banking-1", "bank.example", "its access groups"] {
            #expect(bytes.range(of: Data(needle.utf8)) == nil, "\(needle) is in the journal in the clear")
        }
        let mode = try FileManager.default.attributesOfItem(atPath: path + "-accesslog")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        _ = consume keychain
        try KeychainDatabase.delete(at: path)
        #expect(!FileManager.default.fileExists(atPath: path + "-accesslog"))
    }
}
