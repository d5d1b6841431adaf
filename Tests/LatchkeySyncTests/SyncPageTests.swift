import Foundation
import LatchkeyEngine
import LatchkeyStorage
import LatchkeySync
import LatchkeyTestSupport
import Testing

@Suite("Applying a page of the inbox")
struct SyncPageTests {
    /// A record of a synchronizable password as another device sends it.
    static func record(id byte: UInt8, secret: String, account: String = "same") -> SyncRecord {
        let now = Date()
        return SyncRecord(
            itemID: Data(repeating: byte, count: 16), version: 1, deleted: false, itemClass: .genericPassword,
            attributes: [
                .service: .string("mail"), .account: .string(account), .accessGroup: .string("com.example.app"),
                .accessible: .string("ak"), .synchronizable: .number(1), .creationDate: .date(now),
                .modificationDate: .date(now),
            ],
            data: Data(secret.utf8))
    }

    @Test func twoItemsWithOnePrimaryKeyInOnePageKeepTheLowerIDAndNoIndexEntryOfTheOther() throws {
        let device = try SyncDevice("a")
        for order in [[UInt8(0xEE), 0x11], [0x22, 0xDD]] {
            let page = order.enumerated().map { index, byte in
                let record = Self.record(id: byte, secret: "from-\(byte)")
                return (
                    envelope: SyncEnvelope(
                        sequence: Int64(index + 1), itemID: record.itemID, version: 1, deleted: false, keyID: 1,
                        ciphertext: Data(), author: Data(count: 16)),
                    opened: Result<SyncRecord, KeychainError>.success(record)
                )
            }
            let rows = device.keychain.sync.prepare(
                page.map(\.envelope), opened: page.map(\.opened), except: Data(repeating: 0xAA, count: 16))
            let outcomes = try device.keychain.sync.write(rows, cursor: nil, sealer: { _ in (1, Data([1])) }) {
                _, opened, _ in
                guard case .success(let record) = opened else { return .discard }
                return .apply(record)
            }.map(\.outcome)
            #expect(
                outcomes == (order[0] > order[1] ? [.applied, .appliedOverConflict] : [.applied, .lostToExistingItem]))
            let low = min(order[0], order[1])
            #expect(try device.contents() == ["mail/same": "from-\(low)"])
            let found = try device.keychain.copyMatching(
                ItemQuery(
                    .genericPassword, matching: [.account: .string("same")], synchronizable: .yes, limit: .all,
                    returning: [.data]),
                caller: SyncDevice.app)
            #expect(found.count == 1)
            #expect(try device.keychain.orphanIndexEntries() == 0)
            #expect(try device.keychain.verifyIntegrity().damaged.isEmpty)
            try device.delete("same")
        }
    }

    /// A page fresh from the server (rows 1…4, the third one refused) as `write` gets it.
    static func freshPage(device: SyncDevice) -> [SyncPreparedRow] {
        let page = [UInt8(0x10), 0x20, 0x30, 0x40].enumerated().map { index, byte in
            let record = Self.record(id: byte, secret: "s-\(byte)", account: "acct-\(byte)")
            return (
                envelope: SyncEnvelope(
                    sequence: Int64(index + 1), itemID: record.itemID, version: 1, deleted: false, keyID: 1,
                    ciphertext: Data(), author: Data(count: 16)),
                opened: byte == 0x30
                    ? Result<SyncRecord, KeychainError>.failure(KeychainError(.decode, "altered"))
                    : .success(record)
            )
        }
        return device.keychain.sync.prepare(
            page.map(\.envelope), opened: page.map(\.opened), except: Data(repeating: 0xAA, count: 16))
    }

    static func write(_ rows: [SyncPreparedRow], to device: SyncDevice) throws(KeychainError) -> [SyncWrittenRow] {
        try device.keychain.sync.write(rows, cursor: 4, sealer: { _ in (1, Data([1])) }) { _, opened, _ in
            switch opened {
            case .success(let record): .apply(record)
            case .failure(let error): .reject(error.detail ?? error.message)
            }
        }
    }

    /// New items written a page at a time: their change-feed entries in the page's order (written at the
    /// page's end), a refused row recorded and skipped, the cursor moved, nothing left to push.
    @Test func aPageOfNewItemsIsRecordedInItsOrderAndARefusedRowIsSkipped() throws {
        let device = try SyncDevice("a")
        let written = try Self.write(Self.freshPage(device: device), to: device)
        #expect(written.map(\.outcome) == [.applied, .applied, nil, .applied])
        #expect(try device.keychain.sync.cursor() == 4)
        let counts = try device.keychain.sync.counts()
        #expect(counts.pending == 0 && counts.inbox == 0 && counts.rejected == 1 && counts.conflicts == 0)
        let changes = try device.keychain.changes(after: 0)
        #expect(changes.map(\.sequence) == [1, 2, 3])
        #expect(changes.map(\.itemID) == [0x10, 0x20, 0x40].map { Data(repeating: $0, count: 16) })
        #expect(changes.allSatisfy { $0.kind == .added && $0.origin == .sync && $0.synchronizable && $0.version == 1 })
        #expect(try device.contents() == ["mail/acct-16": "s-16", "mail/acct-32": "s-32", "mail/acct-64": "s-64"])
        #expect(try device.keychain.verifyIntegrity().isHealthy)
    }

    /// A page and its cursor are one transaction: when the cursor cannot be written — after every row of
    /// the page was — nothing of the page stays (no item, no change-feed entry, no known version), and the
    /// page written again afterwards applies whole.
    @Test func aPageWhoseCursorFailsLeavesNothing() throws {
        let device = try SyncDevice("a")
        let path = device.directory.file("a.keychain")
        do {
            let db = try Connection(path: path, mode: .readWrite)
            try db.execute(
                "CREATE TRIGGER test_refuse_cursor BEFORE INSERT ON sync_state BEGIN SELECT RAISE(ABORT, 'refused'); END"
            )
        }
        let rows = Self.freshPage(device: device)
        // RAISE(ABORT) is a constraint failure to SQLite, which the engine reports as errSecDuplicateItem.
        #expect(status { _ = try Self.write(rows, to: device) } == .duplicateItem)
        #expect(try device.keychain.sync.cursor() == 0)
        #expect(try device.contents() == [:])
        #expect(try device.keychain.changes(after: 0) == [])
        #expect(try device.keychain.sync.counts().rejected == 0)
        do {
            let db = try Connection(path: path, mode: .readWrite)
            try db.execute("DROP TRIGGER test_refuse_cursor")
        }
        #expect(try Self.write(rows, to: device).map(\.outcome) == [.applied, .applied, nil, .applied])
        #expect(try device.keychain.changes(after: 0).map(\.sequence) == [1, 2, 3])
        #expect(try device.keychain.sync.cursor() == 4)
    }

    /// A mark left in `sync_dirty` by an item deleted before (its id has no row) is cleared when the page
    /// brings that id back as a new item: it is as the server has it. With no mark at all, none is made.
    @Test func aNewItemClearsAMarkLeftOfItsIDAndMakesNone() throws {
        let device = try SyncDevice("a")
        let path = device.directory.file("a.keychain")
        func marks() throws -> [Data] {
            let db = try Connection(path: path, mode: .readWrite)
            var ids: [Data] = []
            try db.forEachRow("SELECT item FROM sync_dirty ORDER BY item") { row in ids.append(row.blob(0) ?? Data()) }
            return ids
        }
        do {
            let db = try Connection(path: path, mode: .readWrite)
            try db.run(
                "INSERT INTO sync_dirty (item) VALUES (?), (?)",
                [
                    .blob(Data(repeating: 0x20, count: 16)), .blob(Data(repeating: 0x99, count: 16)),
                ])
        }
        #expect(
            try Self.write(Self.freshPage(device: device), to: device).map(\.outcome) == [
                .applied, .applied, nil, .applied,
            ])
        #expect(try marks() == [Data(repeating: 0x99, count: 16)], "the other id's mark stays")

        let other = try SyncDevice("b")
        #expect(
            try Self.write(Self.freshPage(device: other), to: other).map(\.outcome) == [
                .applied, .applied, nil, .applied,
            ])
        let db = try Connection(path: other.directory.file("b.keychain"), mode: .readWrite)
        #expect(try db.integer("SELECT count(*) FROM sync_dirty") == 0)
        #expect(try db.integer("SELECT count(*) FROM sync_items") == 3)
    }
}
