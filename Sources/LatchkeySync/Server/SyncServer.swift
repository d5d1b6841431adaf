package import FoundationEssentials
import LatchkeyCrypto
package import LatchkeyEngine
internal import LatchkeyPOSIX

/// A device as the server lists it.
package struct ServerDevice: Sendable, Equatable {
    package var id: Data
    package var name: String
    package var publicKey: Data
    /// `pending`, `active`, `removed` or `recovery` (the recovery code's key pair).
    package var state: String
    /// The approval tag (`VaultCrypto.approval`), nil while pending.
    package var approval: Data?
    /// The highest change sequence it pulled.
    package var cursor: Int64
    /// When it last pushed or pulled (server time, ISO 8601).
    package var lastSeen: String
}

/// The outcome of one pushed row: its new sequence, or refused with the version the server holds.
package struct PushResult: Sendable, Equatable {
    package var itemID: Data
    /// nil when refused (compare-and-swap mismatch).
    package var sequence: Int64?
    package var serverVersion: Int64
}

/// The sync server's operations, over one connection: the only SQL the client sends.
package struct SyncServer: Sendable {
    package let connection: PostgresConnection
    /// Direct (LISTEN for changes) or pooled (poll; no session state): `SyncConnectionString`.
    package let mode: SyncConnectionMode

    package init(connection: PostgresConnection, mode: SyncConnectionMode = .direct) {
        self.connection = connection
        self.mode = mode
    }

    /// Connects (the connection string may name a mode, `SyncConnectionString`) and brings the schema up
    /// to date.
    package static func connect(_ conninfo: String) throws(PostgresError) -> SyncServer {
        let parsed = try SyncConnectionString(conninfo)
        let connection = try PostgresConnection(parsed.writer)
        try SyncServerSchema.migrate(connection)
        return SyncServer(connection: connection, mode: parsed.mode)
    }

    /// The connection pulls read from when the connection string sends them to a standby
    /// (`latchkey_pulls=standby`); nil when they read from the writer's. No migration: a standby is
    /// read-only, and the writer's connection migrates the primary.
    package static func connectReader(_ conninfo: String) throws(PostgresError) -> SyncServer? {
        let parsed = try SyncConnectionString(conninfo)
        guard let reader = parsed.reader else { return nil }
        return SyncServer(connection: try PostgresConnection(reader), mode: parsed.mode)
    }

    package func createVault(_ vault: Data) throws(PostgresError) {
        try connection.query("INSERT INTO latchkey.vaults (id) VALUES ($1)", [.bytes(vault)])
    }

    /// Every vault id on the server (a join without `--vault` picks the only one).
    package func vaults() throws(PostgresError) -> [Data] {
        try connection.query("SELECT id FROM latchkey.vaults ORDER BY created").compactMap { $0[0].bytes }
    }

    package func registerDevice(vault: Data, id: Data, name: String, publicKey: Data, state: String, approval: Data?)
        throws(PostgresError)
    {
        try connection.query(
            "INSERT INTO latchkey.devices (vault, id, name, public_key, state, approval) VALUES ($1, $2, $3, $4, $5, $6)",
            [
                .bytes(vault), .bytes(id), .text(name), .bytes(publicKey), .text(state),
                approval.map { .bytes($0) } ?? .null,
            ])
    }

    package func setDevice(vault: Data, id: Data, state: String, approval: Data?) throws(PostgresError) {
        try connection.query(
            "UPDATE latchkey.devices SET state = $3, approval = $4 WHERE vault = $1 AND id = $2",
            [.bytes(vault), .bytes(id), .text(state), approval.map { .bytes($0) } ?? .null])
    }

    package func devices(vault: Data) throws(PostgresError) -> [ServerDevice] {
        try connection.query(
            """
            SELECT id, name, public_key, state, approval, cursor,
                   to_char(last_seen AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
            FROM latchkey.devices WHERE vault = $1 ORDER BY name, id
            """, [.bytes(vault)]
        ).map { row in
            ServerDevice(
                id: row[0].bytes ?? Data(), name: row[1].text ?? "", publicKey: row[2].bytes ?? Data(),
                state: row[3].text ?? "",
                approval: row[4].bytes, cursor: row[5].integer ?? 0, lastSeen: row[6].text ?? "")
        }
    }

    /// Stores vault keys sealed to devices (`device`, key id, sealed box), replacing any with the same ids.
    package func putKeys(vault: Data, _ keys: [(device: Data, keyID: Int32, sealed: Data)]) throws(PostgresError) {
        for key in keys {
            try connection.query(
                """
                INSERT INTO latchkey.vault_keys (vault, device, key_id, sealed) VALUES ($1, $2, $3::int4, $4)
                ON CONFLICT (vault, device, key_id) DO UPDATE SET sealed = excluded.sealed
                """, [.bytes(vault), .bytes(key.device), .integer(Int64(key.keyID)), .bytes(key.sealed)])
        }
    }

    /// The vault keys sealed to `device` with an id above `keyID`, in id order.
    package func keys(vault: Data, device: Data, after keyID: Int32 = 0) throws(PostgresError) -> [(
        keyID: Int32, sealed: Data
    )] {
        try connection.query(
            "SELECT key_id, sealed FROM latchkey.vault_keys WHERE vault = $1 AND device = $2 AND key_id > $3::int4 ORDER BY key_id",
            [.bytes(vault), .bytes(device), .integer(Int64(keyID))]
        ).map { (keyID: Int32(truncatingIfNeeded: $0[0].integer ?? 0), sealed: $0[1].bytes ?? Data()) }
    }

    /// Pushes rows with compare-and-swap, all in one transaction.
    package func push(vault: Data, device: Data, _ rows: [(envelope: SyncEnvelope, expected: Int64)])
        throws(PostgresError) -> [PushResult]
    {
        guard !rows.isEmpty else { return [] }
        func array(_ elements: [String]) -> String { "{" + elements.joined(separator: ",") + "}" }
        func bytea(_ data: Data) -> String { "\"\\\\x" + Hex.encode(data) + "\"" }
        let results = try connection.query(
            "SELECT out_item, out_seq, out_version FROM latchkey.push($1, $2, $3, $4, $5, $6, $7, $8)",
            [
                .bytes(vault), .bytes(device),
                .text(array(rows.map { bytea($0.envelope.itemID) })),
                .text(array(rows.map { String($0.expected) })),
                .text(array(rows.map { String($0.envelope.version) })),
                .text(array(rows.map { $0.envelope.deleted ? "t" : "f" })),
                .text(array(rows.map { String($0.envelope.keyID) })),
                .text(array(rows.map { bytea($0.envelope.ciphertext) })),
            ])
        return results.map {
            PushResult(itemID: $0[0].bytes ?? Data(), sequence: $0[1].integer, serverVersion: $0[2].integer ?? 0)
        }
    }

    /// Rows with a change sequence above `cursor`, in sequence order, at most `limit`; and the sequence below
    /// which collected tombstones may be missing.
    package func pull(vault: Data, after cursor: Int64, limit: Int) throws(PostgresError) -> (
        rows: [SyncEnvelope], collected: Int64, newest: Int64
    ) {
        let rows = try connection.query(
            """
            SELECT seq, item, version, deleted, key_id, ciphertext, author FROM latchkey.items
            WHERE vault = $1 AND seq > $2::int8 ORDER BY seq LIMIT $3::int8
            """, [.bytes(vault), .integer(cursor), .integer(Int64(limit))])
        let state = try connection.query("SELECT collected, seq FROM latchkey.vaults WHERE id = $1", [.bytes(vault)])
            .first
        let collected = state?[0].integer ?? 0
        let newest = state?[1].integer ?? 0
        return (
            rows.map { row in
                SyncEnvelope(
                    sequence: row[0].integer ?? 0, itemID: row[1].bytes ?? Data(), version: row[2].integer ?? 0,
                    deleted: row[3].bool ?? false, keyID: Int32(truncatingIfNeeded: row[4].integer ?? 0),
                    ciphertext: row[5].bytes ?? Data(), author: row[6].bytes ?? Data())
            }, collected, newest
        )
    }

    /// Every item the server holds for the vault, with its version and deleted flag (no ciphertext).
    package func versions(vault: Data) throws(PostgresError) -> [Data: (version: Int64, deleted: Bool)] {
        var versions: [Data: (version: Int64, deleted: Bool)] = [:]
        for row in try connection.query(
            "SELECT item, version, deleted FROM latchkey.items WHERE vault = $1", [.bytes(vault)])
        {
            if let id = row[0].bytes { versions[id] = (row[1].integer ?? 0, row[2].bool ?? false) }
        }
        return versions
    }

    /// Every item id the server holds for the vault (tombstones included): a full resync compares with it.
    package func itemIDs(vault: Data) throws(PostgresError) -> Set<Data> {
        Set(
            try connection.query("SELECT item FROM latchkey.items WHERE vault = $1", [.bytes(vault)]).compactMap {
                $0[0].bytes
            })
    }

    /// Marks the device as seen and returns its state (nil when the server does not know it).
    package func checkIn(vault: Data, device: Data) throws(PostgresError) -> String? {
        try connection.query(
            "UPDATE latchkey.devices SET last_seen = now() WHERE vault = $1 AND id = $2 RETURNING state",
            [.bytes(vault), .bytes(device)]
        ).first?.first?.text
    }

    /// Records how far the device has pulled (tombstone collection waits for every active device).
    package func reportCursor(vault: Data, device: Data, cursor: Int64) throws(PostgresError) {
        try connection.query(
            "UPDATE latchkey.devices SET cursor = $3::int8, last_seen = now() WHERE vault = $1 AND id = $2",
            [.bytes(vault), .bytes(device), .integer(cursor)])
    }

    /// Collects tombstones (see `latchkey.collect_tombstones`); returns how many went.
    package func collectTombstones(vault: Data, horizonSeconds: Int) throws(PostgresError) -> Int {
        Int(
            try connection.query(
                "SELECT latchkey.collect_tombstones($1, make_interval(secs => $2::int8))",
                [.bytes(vault), .integer(Int64(horizonSeconds))]
            ).first?.first?.integer ?? 0)
    }

    /// The vault's newest change sequence (nil when the server does not hold the vault): the poll of a
    /// pooled device, one primary-key lookup in one short transaction, one message each way. A device whose cursor differs has
    /// something to pull (or finds the server went back in time).
    package func newestChange(vault: Data) throws(PostgresError) -> Int64? {
        // By the simple query protocol, the vault id in hex in the text (its own bytes: nothing to escape).
        try connection.simpleQuery("SELECT seq FROM latchkey.vaults WHERE id = '\\x\(Hex.encode(vault))'::bytea").first?
            .first?.flatMap { $0 }
            .flatMap { Int64($0) }
    }

    /// The channel the vault's pushes ring.
    package static func channel(vault: Data) -> String { "latchkey_" + Hex.encode(vault) }

    package func listen(vault: Data) throws(PostgresError) {
        try connection.execute("LISTEN \(Self.channel(vault: vault))")
    }
}
