import Foundation
import LatchkeyEngine
import LatchkeySync
import LatchkeyTestSupport
import Testing

@Suite("Applying a page of the inbox")
struct SyncPageTests {
    /// A record of a synchronizable password as another device sends it.
    static func record(id byte: UInt8, secret: String) -> SyncRecord {
        let now = Date()
        return SyncRecord(
            itemID: Data(repeating: byte, count: 16), version: 1, deleted: false, itemClass: .genericPassword,
            attributes: [
                .service: .string("mail"), .account: .string("same"), .accessGroup: .string("com.example.app"),
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
            let rows = device.keychain.sync.prepare(page, except: Data(repeating: 0xAA, count: 16))
            let outcomes = try device.keychain.sync.write(rows, cursor: nil, sealer: { _ in (1, Data([1])) }) {
                row, _ in
                guard case .success(let record) = row.opened else { return .discard }
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
}
