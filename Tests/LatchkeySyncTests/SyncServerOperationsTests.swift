import Foundation
import LatchkeyEngine
import LatchkeySync
import LatchkeyTestSupport
import Testing

/// What docs/SYNC.md tells a DBA: the roles it lists are enough, and a server restored from a backup loses
/// nothing the devices still have.
@Suite("Running the sync server", .serialized)
struct SyncServerOperationsTests {
    @Test(arguments: SyncConnection.allCases) func theRolesDocsSyncMDListsAreEnoughForEveryDeviceOperation(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let schema = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().appendingPathComponent("contrib/postgresql/latchkey-sync.sql"),
            encoding: .utf8)
        try cluster.psql("CREATE ROLE latchkey_owner NOLOGIN")
        try cluster.psql("CREATE DATABASE vaults OWNER latchkey_owner")
        try cluster.psql("SET ROLE latchkey_owner;\n" + schema, database: "vaults")
        try cluster.psql(
            """
            CREATE ROLE latchkey_device LOGIN;
            SET ROLE latchkey_owner;
            GRANT USAGE ON SCHEMA latchkey TO latchkey_device;
            GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA latchkey TO latchkey_device;
            GRANT DELETE ON latchkey.vault_keys, latchkey.items TO latchkey_device;
            GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA latchkey TO latchkey_device;
            """, database: "vaults")
        #expect(
            try cluster.psql("SELECT has_database_privilege('latchkey_device', 'vaults', 'CREATE')", database: "vaults")
                .trimmingCharacters(in: .whitespacesAndNewlines) == "f")
        let server = cluster.conninfo(user: "latchkey_device", database: "vaults")
        let a = try SyncDevice("a")
        let b = try SyncDevice("b")
        try a.add("x", "1")
        let made = try SyncClient.setup(a.keychain, server: server, deviceName: "a")
        a.client = made.client
        try a.sync()
        b.client = try SyncClient.join(
            b.keychain, server: server, vault: nil, deviceName: "b", recoveryCode: made.recoveryCode
        ).client
        try b.sync()
        try b.delete("x")
        try b.sync()
        try a.client.sync(collectTombstonesOlderThan: 0)
        try a.client.removeDevice(named: "b")
        #expect(try a.contents() == [:])
        #expect(
            try cluster.psql("SELECT count(*) FROM latchkey.items", database: "vaults").trimmingCharacters(
                in: .whitespacesAndNewlines) == "0")
    }

    @Test(arguments: SyncConnection.allCases) func aServerRestoredFromAnOlderBackupGetsBackWhatItLost(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let vault = try SyncDevice.vault(
            cluster, "a", "b", items: [("kept", "1"), ("changed", "old"), ("removed", "r")])
        let a = vault.devices[0]
        let b = vault.devices[1]
        // The backup…
        try cluster.psql(
            "CREATE TABLE public.items_backup AS SELECT * FROM latchkey.items; CREATE TABLE public.vaults_backup AS SELECT * FROM latchkey.vaults"
        )
        // …then life goes on…
        try a.update("changed", "new")
        try a.delete("removed")
        try b.add("added", "b")
        try a.sync()
        try b.sync()
        try a.sync()
        // …and the server is restored from the backup.
        try cluster.psql(
            """
            DELETE FROM latchkey.items; INSERT INTO latchkey.items SELECT * FROM public.items_backup;
            UPDATE latchkey.vaults v SET seq = b.seq, collected = b.collected FROM public.vaults_backup b WHERE v.id = b.id;
            """)
        let report = try a.sync()
        #expect(report.serverWentBack)
        #expect(report.rejected == 0)
        try b.sync()
        let expected = ["mail/kept": "1", "mail/changed": "new", "mail/added": "b"]
        #expect(try a.contents() == expected)
        #expect(try b.contents() == expected)
        #expect(try a.keychain.sync.rejections().isEmpty)
        // A new device gets the whole present, not the backup's past.
        let c = try SyncDevice("c")
        try c.join(cluster, recoveryCode: vault.recoveryCode)
        try c.sync()
        #expect(try c.contents() == expected)
    }
}

@Suite("The server's schema and its migrations", .serialized)
struct SyncServerSchemaTests {
    @Test(arguments: SyncConnection.allCases) func aServerWhoseSchemaIsNewerThanThisLatchkeyIsRefusedAndLeftAlone(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let a = try SyncDevice("a")
        try a.setup(cluster)
        try cluster.psql("INSERT INTO latchkey.schema_version VALUES (\(SyncServerSchema.latest + 1))")
        let b = try SyncDevice("b")
        #expect(
            throws: KeychainError(
                .io,
                "the sync server: the server's schema is version \(SyncServerSchema.latest + 1); this Latchkey knows \(SyncServerSchema.latest): upgrade it"
            )
        ) {
            _ = try SyncClient.join(
                b.keychain, server: cluster.conninfo, vault: nil, deviceName: "b", recoveryCode: nil)
        }
        #expect(
            try cluster.psql("SELECT count(*) FROM latchkey.devices").trimmingCharacters(in: .whitespacesAndNewlines)
                == "2")
    }

    @Test(arguments: SyncConnection.allCases) func twoClientsCreatingTheSchemaAtOnceMakeItOnce(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        final class Outcome: @unchecked Sendable {
            // @unchecked: each thread writes its own slot; read after both joined.
            var errors: [PostgresError?] = [nil, nil]
        }
        let outcome = Outcome()
        let group = DispatchGroup()
        for index in 0..<2 {
            group.enter()
            let conninfo = cluster.conninfo
            Thread.detachNewThread {
                do throws(PostgresError) { _ = try SyncServer.connect(conninfo) } catch {
                    outcome.errors[index] = error
                }
                group.leave()
            }
        }
        group.wait()
        #expect(outcome.errors.allSatisfy { $0 == nil }, "\(outcome.errors)")
        #expect(
            try cluster.psql("SELECT string_agg(version::text, ',') FROM latchkey.schema_version").trimmingCharacters(
                in: .whitespacesAndNewlines)
                == "\(SyncServerSchema.latest)")
    }
}
