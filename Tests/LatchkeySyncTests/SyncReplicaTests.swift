import Foundation
import LatchkeyEngine
import LatchkeySync
import LatchkeyTestSupport
import Testing

/// Pulls from a streaming-replication standby (`latchkey_pulls=standby`; two clusters started by the
/// test, the standby made with `pg_basebackup -R` and held behind the primary with
/// `recovery_min_apply_delay`): a device reading from it sees a prefix of the vault's changes — never a
/// row out of order — writes go to the primary, and a standby behind what the device already pulled is
/// taken for lag, not for a server gone back in time: that round reads from the primary.
@Suite("Pulls from a standby", .serialized)
struct SyncReplicaTests {
    @Test func aLaggingStandbyShowsAPrefixAndIsNeverTakenForARollback() throws {
        let primary = try PostgresCluster()
        let a = try SyncDevice("a")
        try a.add("x", "1")
        let code = try a.setup(conninfo: primary.conninfo)
        try a.sync()
        // The standby holds what the primary had now, and applies nothing newer for an hour.
        let standby = try PostgresCluster(standbyOf: primary, settings: "recovery_min_apply_delay = '1h'\n")
        #expect(try standby.psql("SELECT pg_is_in_recovery()").trimmingCharacters(in: .whitespacesAndNewlines) == "t")
        try a.update("x", "2")
        try a.add("y", "3")
        try a.sync()

        let both =
            "host=\(primary.directory),\(standby.directory) port=5432,5432 user=latchkey dbname=latchkey connect_timeout=5 latchkey_pulls=standby"
        let b = try SyncDevice("b")
        try b.join(conninfo: both, recoveryCode: code)
        let lagging = try b.sync()
        #expect(lagging.serverWentBack == false && lagging.rejected == 0)
        #expect(try b.contents() == ["mail/x": "1"])
        #expect(
            try standby.psql(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = 'latchkey' AND pid <> pg_backend_pid()"
            )
            .trimmingCharacters(in: .whitespacesAndNewlines) == "1")

        // With the standby down, pulls read from the primary: the device goes past what the standby has.
        standby.stop()
        #expect(try b.sync().applied == 2)
        #expect(try b.contents() == ["mail/x": "2", "mail/y": "3"])
        try standby.start()
        b.client.disconnect()

        // Back on the standby, which is behind this device's cursor: lag, not a rollback; the primary is read.
        try a.add("z", "4")
        try a.sync()
        let behind = try b.sync()
        #expect(behind.serverWentBack == false && behind.fullResync == false && behind.rejected == 0)
        #expect(behind.applied == 1)
        #expect(try b.contents() == ["mail/x": "2", "mail/y": "3", "mail/z": "4"])
        #expect(try b.keychain.sync.counts().pending == 0)
        #expect(try b.keychain.sync.rejections().isEmpty)
        // Writes went to the primary all along.
        try b.update("z", "5")
        #expect(try b.sync().pushed == 1)
        try a.sync()
        #expect(try a.contents() == ["mail/x": "2", "mail/y": "3", "mail/z": "5"])
    }
}
