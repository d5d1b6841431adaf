import Foundation
import LatchkeyEngine
import LatchkeySync
import LatchkeyTestSupport
import Testing

/// A server that misbehaves: every change it makes to the rows is refused with a clear reason, nothing of
/// it applied, the other items unaffected.
@Suite("Sync against a server that misbehaves", .serialized)
struct SyncTamperingTests {
    /// A vault with two devices and items a and b on both; the server's rows then get `tamper`, and the
    /// reader pulls (through `connection`): returns the reader and what it refused.
    func tampered(_ connection: SyncConnection, _ tamper: (SyncTestServer) throws -> Void)
        throws -> (reader: SyncDevice, rejections: [SyncRejection], contents: [String: String], cluster: SyncTestServer)
    {
        let cluster = try SyncTestServer(connection)
        let vault = try SyncDevice.vault(cluster, "writer", "reader", items: [("a", "secret-a"), ("b", "secret-b")])
        let writer = vault.devices[0]
        let reader = vault.devices[1]
        try tamper(cluster)
        try writer.add("c", "secret-c")
        try writer.sync()
        try reader.sync()
        return (reader, try reader.keychain.sync.rejections(), try reader.contents(), cluster)
    }

    /// Gives the row of `account`'s item a new sequence number, as if the server wrote it again just now.
    static func bump(_ cluster: SyncTestServer, _ condition: String) throws {
        try cluster.psql(
            """
            WITH v AS (UPDATE latchkey.vaults SET seq = seq + 1 RETURNING id, seq)
            UPDATE latchkey.items i SET seq = v.seq FROM v WHERE i.vault = v.id AND \(condition)
            """)
    }

    @Test(arguments: SyncConnection.allCases) func aFlippedCiphertextIsRefused(_ connection: SyncConnection) throws {
        let result = try tampered(connection) { cluster in
            // The byte's bits flipped, not set to 0xff: a byte that already held 0xff was left as it was one
            // time in 256, and nothing was refused.
            try cluster.psql(
                "UPDATE latchkey.items SET ciphertext = set_byte(ciphertext, 29, get_byte(ciphertext, 29) # 255) WHERE seq = 1"
            )
            try Self.bump(cluster, "i.seq = 1")
        }
        #expect(
            result.rejections.map(\.reason) == [
                "its ciphertext failed authentication (altered, or moved from another item, version or vault)"
            ])
        #expect(result.contents == ["mail/a": "secret-a", "mail/b": "secret-b", "mail/c": "secret-c"])
    }

    @Test(arguments: SyncConnection.allCases) func aRowMovedToAnotherItemIsRefused(_ connection: SyncConnection) throws
    {
        let result = try tampered(connection) { cluster in
            // Item 2's ciphertext (and version) copied over item 1, as a new change of item 1.
            try cluster.psql(
                """
                UPDATE latchkey.items t SET ciphertext = s.ciphertext, version = t.version + 1
                FROM latchkey.items s WHERE t.seq = 1 AND s.seq = 2
                """)
            try Self.bump(cluster, "i.seq = 1")
        }
        #expect(
            result.rejections.map(\.reason) == [
                "its ciphertext failed authentication (altered, or moved from another item, version or vault)"
            ])
        #expect(result.contents == ["mail/a": "secret-a", "mail/b": "secret-b", "mail/c": "secret-c"])
    }

    @Test(arguments: SyncConnection.allCases) func anOldVersionReplayedIsRefused(_ connection: SyncConnection) throws {
        let cluster = try SyncTestServer(connection)
        let vault = try SyncDevice.vault(cluster, "writer", "reader", items: [("a", "version-1")])
        let writer = vault.devices[0]
        let reader = vault.devices[1]
        try cluster.psql("CREATE TABLE public.saved AS SELECT * FROM latchkey.items")
        try writer.update("a", "version-2")
        try writer.sync()
        try reader.sync()
        // The server puts the first version back, as if it were the newest change.
        try cluster.psql(
            """
            WITH v AS (UPDATE latchkey.vaults SET seq = seq + 1 RETURNING id, seq)
            UPDATE latchkey.items i SET version = s.version, ciphertext = s.ciphertext, deleted = s.deleted, seq = v.seq
            FROM public.saved s, v WHERE i.vault = v.id AND i.item = s.item
            """)
        let report = try reader.sync()
        #expect(report.rejected == 1)
        #expect(report.applied == 0)
        #expect(
            try reader.keychain.sync.rejections().map(\.reason) == [
                "version 1 is older than version 2 this device has: replayed or rolled back"
            ])
        #expect(try reader.contents() == ["mail/a": "version-2"])
    }

    /// Pages are written whole, in one transaction: a page that holds an item twice — its new version, then
    /// an old one the server slipped in after it — is still judged row by row, so the old one is refused
    /// and the new one stays.
    @Test(arguments: SyncConnection.allCases) func anOldVersionAfterTheNewOneInOnePageIsRefused(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let vault = try SyncDevice.vault(cluster, "writer", "reader", items: [("a", "version-1")])
        let writer = vault.devices[0]
        let reader = vault.devices[1]
        try cluster.psql("CREATE TABLE public.saved AS SELECT * FROM latchkey.items")
        try writer.update("a", "version-2")
        try writer.sync()
        // The server gives the item a second row, its first version, right after the second: one page.
        try cluster.psql(
            """
            ALTER TABLE latchkey.items DROP CONSTRAINT items_pkey;
            WITH v AS (UPDATE latchkey.vaults SET seq = seq + 1 RETURNING id, seq)
            INSERT INTO latchkey.items (vault, item, version, seq, deleted, key_id, ciphertext, author)
            SELECT s.vault, s.item, s.version, v.seq, s.deleted, s.key_id, s.ciphertext, s.author
            FROM public.saved s, v WHERE s.vault = v.id
            """)
        let report = try reader.sync()
        #expect(report.applied == 1)
        #expect(report.rejected == 1)
        #expect(
            try reader.keychain.sync.rejections().map(\.reason) == [
                "version 1 is older than version 2 this device has: replayed or rolled back"
            ])
        #expect(try reader.contents() == ["mail/a": "version-2"])
        #expect(try reader.keychain.verifyIntegrity().damaged.isEmpty)
    }

    @Test(arguments: SyncConnection.allCases) func aRowOfAnotherVaultCopiedInIsRefused(_ connection: SyncConnection)
        throws
    {
        let result = try tampered(connection) { cluster in
            let other = try SyncDevice("other")
            try other.add("a", "other-vault")
            _ = try SyncClient.setup(other.keychain, server: cluster.conninfo, deviceName: "other").client.sync()
            // The other vault's row, under the same item id as a, sent as a new version of a.
            try cluster.psql(
                """
                WITH mine AS (SELECT vault, item FROM latchkey.items WHERE seq = 1 AND vault = (SELECT id FROM latchkey.vaults ORDER BY created LIMIT 1)),
                     theirs AS (SELECT ciphertext, author FROM latchkey.items WHERE vault = (SELECT id FROM latchkey.vaults ORDER BY created DESC LIMIT 1))
                UPDATE latchkey.items i SET ciphertext = theirs.ciphertext, author = theirs.author, version = i.version + 1
                FROM mine, theirs WHERE i.vault = mine.vault AND i.item = mine.item
                """)
            try Self.bump(cluster, "i.seq = 1")
        }
        #expect(
            result.rejections.map(\.reason) == [
                "its ciphertext failed authentication (altered, or moved from another item, version or vault)"
            ])
        #expect(result.contents == ["mail/a": "secret-a", "mail/b": "secret-b", "mail/c": "secret-c"])
    }

    @Test(arguments: SyncConnection.allCases) func aForgedDeletionIsRefused(_ connection: SyncConnection) throws {
        let result = try tampered(connection) { cluster in
            try cluster.psql("UPDATE latchkey.items SET deleted = true, version = version + 1 WHERE seq = 1")
            try Self.bump(cluster, "i.seq = 1")
        }
        #expect(
            result.rejections.map(\.reason) == [
                "its ciphertext failed authentication (altered, or moved from another item, version or vault)"
            ])
        #expect(result.contents == ["mail/a": "secret-a", "mail/b": "secret-b", "mail/c": "secret-c"])
    }
}
