import Foundation
import LatchkeyEngine
import LatchkeySync
import LatchkeyTestSupport
import Testing

@Suite("Tombstones: collected after every device passed them, or after a horizon and a full resync", .serialized)
struct SyncTombstoneTests {
    func count(_ cluster: SyncTestServer, _ condition: String) throws -> String {
        try cluster.psql("SELECT count(*) FROM latchkey.items WHERE \(condition)").trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    @Test(arguments: SyncConnection.allCases) func tombstonesStayUntilEveryActiveDeviceHasPulledPastThem(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let (devices, _) = try SyncDevice.vault(cluster, "a", "b", items: [("x", "1")])
        let (a, b) = (devices[0], devices[1])
        try a.delete("x")
        // b has not pulled the deletion: a long horizon keeps the tombstone.
        try a.client.sync(collectTombstonesOlderThan: 86_400)
        #expect(try count(cluster, "deleted") == "1")
        try b.sync()
        #expect(try b.contents() == [:])
        try a.client.sync(collectTombstonesOlderThan: 86_400)
        #expect(try count(cluster, "deleted") == "0")
        #expect(
            try cluster.psql("SELECT collected FROM latchkey.vaults").trimmingCharacters(in: .whitespacesAndNewlines)
                == "0")
    }

    @Test(arguments: SyncConnection.allCases) func aDeviceThatComesBackAfterTheHorizonResyncsInFullAndLosesNothing(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let vault = try SyncDevice.vault(cluster, "a", "away", items: [("gone", "1"), ("kept", "2")])
        let a = vault.devices[0]
        let away = vault.devices[1]
        try away.add("offline-work", "3")
        try a.delete("gone")
        try a.add("new", "4")
        try a.sync()
        // Past the horizon (0 s here) the tombstone goes although `away` never saw it.
        try cluster.psql("UPDATE latchkey.items SET changed = now() - interval '1 day' WHERE deleted")
        try a.client.sync(collectTombstonesOlderThan: 3_600)
        #expect(try count(cluster, "deleted") == "0")
        let report = try away.sync()
        #expect(report.fullResync)
        #expect(try away.contents() == ["mail/kept": "2", "mail/new": "4", "mail/offline-work": "3"])
        try a.sync()
        #expect(try a.contents() == ["mail/kept": "2", "mail/new": "4", "mail/offline-work": "3"])
    }
}
