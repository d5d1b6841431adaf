import Foundation
import LatchkeyEngine
import LatchkeySync
import LatchkeyTestSupport
import Testing

/// A connection that drops under a request — every server connection terminated, and through PgBouncer
/// the pooler restarted too, closing every client — is made again and the request sent again: the round
/// succeeds, nothing is reported as a failure or a conflict.
@Suite("Connections that drop", .serialized)
struct SyncDroppedConnectionTests {
    @Test(arguments: SyncConnection.allCases) func roundsAfterEveryConnectionWasClosedSucceedOnNewOnes(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let vault = try SyncDevice.vault(cluster, "a", "b", items: [("x", "0")])
        let a = vault.devices[0]
        let b = vault.devices[1]
        for round in 1...4 {
            try a.update("x", "\(round)")
            try cluster.psql(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = 'latchkey' AND pid <> pg_backend_pid()"
            )
            if let bouncer = cluster.bouncer, round % 2 == 0 {
                bouncer.stop()
                try bouncer.start()
            }
            let pushed = try a.sync()
            #expect(pushed.pushed == 1 && pushed.conflicts == 0)
            #expect(try b.client.serverHasChanges())
            let pulled = try b.sync()
            #expect(pulled.applied == 1 && pulled.conflicts == 0)
            #expect(try b.client.serverHasChanges() == false)
            #expect(try b.contents() == ["mail/x": "\(round)"])
        }
    }
}
