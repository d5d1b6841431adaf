import Foundation
import LatchkeyEngine
import LatchkeySync
import LatchkeyTestSupport
import Testing

@Suite("Sync between devices through PostgreSQL", .serialized)
struct SyncBasicsTests {
    @Test(arguments: SyncConnection.allCases) func itemsAddedUpdatedAndDeletedOnOneDeviceReachTheOthers(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let laptop = try SyncDevice("laptop")
        let desktop = try SyncDevice("desktop")
        try laptop.add("alice", "one")
        try laptop.add("local", "stays", sync: false)
        let code = try laptop.setup(cluster)
        #expect(try laptop.sync().pushed == 1)
        try desktop.join(cluster, recoveryCode: code)
        let first = try desktop.sync()
        #expect(first.applied == 1)
        #expect(try desktop.contents() == ["mail/alice": "one"])

        try desktop.update("alice", "two")
        try desktop.add("bob", "three")
        #expect(try desktop.sync().pushed == 2)
        #expect(try laptop.sync().applied == 2)
        #expect(try laptop.contents() == ["mail/alice": "two", "mail/bob": "three"])

        try laptop.delete("alice")
        #expect(try laptop.sync().pushed == 1)
        #expect(try desktop.sync().applied == 1)
        #expect(try desktop.contents() == ["mail/bob": "three"])
        #expect(try laptop.keychain.sync.counts().pending == 0)
        #expect(try desktop.keychain.sync.counts().pending == 0)
    }
}
