import Foundation
import LatchkeyEngine
import LatchkeySync
import LatchkeyTestSupport
import Testing

@Suite("Sync conflicts: one winner everywhere, the loser kept", .serialized)
struct SyncConflictTests {
    @Test(arguments: SyncConnection.allCases)
    func concurrentChangesKeepTheServersFirstAndTheLoserAsAConflictThatCanBeRestored(_ connection: SyncConnection)
        throws
    {
        let cluster = try SyncTestServer(connection)
        let (devices, _) = try SyncDevice.vault(cluster, "a", "b", items: [("alice", "v1")])
        let (a, b) = (devices[0], devices[1])

        try a.update("alice", "from-a")
        try b.update("alice", "from-b")
        try a.sync()
        let report = try b.sync()
        #expect(report.conflicts == 1)
        #expect(try a.contents() == ["mail/alice": "from-a"])
        #expect(try b.contents() == ["mail/alice": "from-a"])

        let conflicts = try b.client.conflicts()
        #expect(conflicts.count == 1)
        #expect(conflicts.first?.record?.data == Data("from-b".utf8))
        #expect(
            conflicts.first?.conflict.reason
                == "changed on this device while another device's change reached the server first")
        #expect(try a.client.conflicts().isEmpty)

        // Restoring the loser makes it a new local change that wins from now on.
        try b.client.restoreConflict(conflicts[0].conflict.id)
        #expect(try b.client.conflicts().isEmpty)
        #expect(try b.sync().pushed == 1)
        try a.sync()
        #expect(try a.contents() == ["mail/alice": "from-b"])
        #expect(status { try b.client.restoreConflict(99) } == .itemNotFound)
    }

    @Test(arguments: SyncConnection.allCases) func theSamePrimaryKeyAddedOnTwoDevicesConvergesToTheLowerIDEverywhere(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let a = try SyncDevice("a")
        let b = try SyncDevice("b")
        let c = try SyncDevice("c")
        let code = try a.setup(cluster)
        try b.join(cluster, recoveryCode: code)
        try c.join(cluster, recoveryCode: code)
        try a.add("shared", "from-a")
        try b.add("shared", "from-b")
        try a.sync()
        try b.sync()
        try a.sync()
        try b.sync()
        try c.sync()
        let winner = try a.contents()
        #expect(winner.count == 1)
        #expect(try b.contents() == winner)
        #expect(try c.contents() == winner)
        // The loser is a conflict record on a device that held it, never dropped silently.
        let losers = try a.client.conflicts() + b.client.conflicts()
        #expect(
            losers.contains { $0.record?.data.map { String(decoding: $0, as: UTF8.self) } != winner["mail/shared"] })
        // Every device finds it through the index, and no index entry is left of the loser (c got both in one page).
        for device in [a, b, c] {
            let found = try device.keychain.copyMatching(
                ItemQuery(
                    .genericPassword, matching: [.account: .string("shared")], synchronizable: .yes, limit: .all,
                    returning: [.data]),
                caller: SyncDevice.app)
            #expect(found.map { String(decoding: $0.data ?? Data(), as: UTF8.self) } == [winner["mail/shared"]])
            #expect(try device.keychain.orphanIndexEntries() == 0)
            #expect(try device.keychain.verifyIntegrity().damaged.isEmpty)
        }
        // The server holds one live row for the pair: the loser was deleted there.
        #expect(
            try cluster.psql("SELECT count(*) FROM latchkey.items WHERE NOT deleted").trimmingCharacters(
                in: .whitespacesAndNewlines) == "1")
    }

    @Test(arguments: SyncConnection.allCases) func aDeleteAndAnUpdateOfTheSameItemKeepTheFirstAndTheOtherAsAConflict(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let (devices, _) = try SyncDevice.vault(cluster, "a", "b", items: [("alice", "v1")])
        let (a, b) = (devices[0], devices[1])
        try a.delete("alice")
        try b.update("alice", "kept?")
        try a.sync()
        #expect(try b.sync().conflicts == 1)
        #expect(try b.contents() == [:])
        #expect(try b.client.conflicts().first?.record?.data == Data("kept?".utf8))
    }
}
