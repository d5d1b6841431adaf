/// The server's schema (PostgreSQL 12 or later; plain SQL and PL/pgSQL, no extension), in the `latchkey`
/// schema, with its migrations. `latchkey sync schema` prints it all — the same text as
/// contrib/postgresql/latchkey-sync.sql — for a DBA who sets the server up by hand; `sync setup` and
/// `sync join` apply whatever is missing (the role then needs CREATE on the database).
///
/// The server holds no attribute, label, service, account or secret in plaintext: per item only the vault
/// id, item id, version, change sequence, deleted flag, key id, ciphertext and author device.
package enum SyncServerSchema {
    /// Each step is applied once, in order, in one transaction under an advisory lock.
    package static let steps: [(version: Int, sql: String)] = [
        (
            1,
            """
            CREATE TABLE latchkey.vaults (
                id bytea PRIMARY KEY CHECK (length(id) = 16),
                seq bigint NOT NULL DEFAULT 0,
                collected bigint NOT NULL DEFAULT 0,
                created timestamptz NOT NULL DEFAULT now()
            );
            CREATE TABLE latchkey.devices (
                vault bytea NOT NULL REFERENCES latchkey.vaults ON DELETE CASCADE,
                id bytea NOT NULL CHECK (length(id) = 16),
                name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
                public_key bytea NOT NULL CHECK (length(public_key) = 32),
                state text NOT NULL CHECK (state IN ('pending', 'active', 'removed', 'recovery')),
                approval bytea,
                cursor bigint NOT NULL DEFAULT 0,
                last_seen timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (vault, id)
            );
            CREATE TABLE latchkey.vault_keys (
                vault bytea NOT NULL,
                key_id integer NOT NULL CHECK (key_id > 0),
                device bytea NOT NULL,
                sealed bytea NOT NULL,
                PRIMARY KEY (vault, device, key_id),
                FOREIGN KEY (vault, device) REFERENCES latchkey.devices ON DELETE CASCADE
            );
            CREATE TABLE latchkey.items (
                vault bytea NOT NULL REFERENCES latchkey.vaults ON DELETE CASCADE,
                item bytea NOT NULL CHECK (length(item) = 16),
                version bigint NOT NULL CHECK (version > 0),
                seq bigint NOT NULL,
                deleted boolean NOT NULL,
                key_id integer NOT NULL,
                ciphertext bytea NOT NULL,
                author bytea NOT NULL,
                changed timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (vault, item)
            );
            CREATE UNIQUE INDEX items_by_seq ON latchkey.items (vault, seq);

            -- Compare-and-swap writes of a batch, in one transaction. The vault's row is locked first, so a
            -- vault's writers are serialised and each takes its sequence numbers in commit order: a reader
            -- that has seen sequence n never later finds a new row below n. A row whose current version is
            -- not the expected one, or that would not move forward, is refused (out_seq NULL) and reported
            -- with the version the server holds. The NOTIFY is delivered at commit.
            CREATE FUNCTION latchkey.push(p_vault bytea, p_device bytea, p_items bytea[], p_expected bigint[],
                                          p_versions bigint[], p_deleted boolean[], p_keys integer[],
                                          p_ciphertexts bytea[])
            RETURNS TABLE (out_item bytea, out_seq bigint, out_version bigint)
            LANGUAGE plpgsql AS $$
            DECLARE
                i integer;
                v_current bigint;
                v_seq bigint;
                v_last bigint;
            BEGIN
                PERFORM 1 FROM latchkey.devices d WHERE d.vault = p_vault AND d.id = p_device AND d.state = 'active';
                IF NOT FOUND THEN
                    RAISE EXCEPTION 'this device is not an active device of the vault' USING ERRCODE = 'LK001';
                END IF;
                SELECT v.seq INTO v_seq FROM latchkey.vaults v WHERE v.id = p_vault FOR UPDATE;
                FOR i IN 1 .. coalesce(array_length(p_items, 1), 0) LOOP
                    SELECT it.version INTO v_current FROM latchkey.items it WHERE it.vault = p_vault AND it.item = p_items[i];
                    v_current := coalesce(v_current, 0);
                    IF v_current <> p_expected[i] OR p_versions[i] <= v_current THEN
                        out_item := p_items[i]; out_seq := NULL; out_version := v_current;
                        RETURN NEXT;
                        CONTINUE;
                    END IF;
                    v_seq := v_seq + 1;
                    v_last := v_seq;
                    INSERT INTO latchkey.items (vault, item, version, seq, deleted, key_id, ciphertext, author)
                    VALUES (p_vault, p_items[i], p_versions[i], v_seq, p_deleted[i], p_keys[i], p_ciphertexts[i], p_device)
                    ON CONFLICT (vault, item) DO UPDATE SET version = excluded.version, seq = excluded.seq,
                        deleted = excluded.deleted, key_id = excluded.key_id, ciphertext = excluded.ciphertext,
                        author = excluded.author, changed = now();
                    out_item := p_items[i]; out_seq := v_seq; out_version := p_versions[i];
                    RETURN NEXT;
                END LOOP;
                IF v_last IS NOT NULL THEN
                    UPDATE latchkey.vaults SET seq = v_seq WHERE id = p_vault;
                    PERFORM pg_notify('latchkey_' || encode(p_vault, 'hex'), v_last::text);
                END IF;
                UPDATE latchkey.devices SET last_seen = now() WHERE vault = p_vault AND id = p_device;
            END $$;

            -- Removes tombstones every active device has pulled past, and those older than the horizon;
            -- `collected` then says below which sequence a returning device must resync in full.
            CREATE FUNCTION latchkey.collect_tombstones(p_vault bytea, p_horizon interval) RETURNS bigint
            LANGUAGE plpgsql AS $$
            DECLARE
                v_floor bigint;
                v_removed bigint;
                v_count bigint;
            BEGIN
                PERFORM 1 FROM latchkey.vaults WHERE id = p_vault FOR UPDATE;
                SELECT coalesce(min(d.cursor), 0) INTO v_floor FROM latchkey.devices d
                    WHERE d.vault = p_vault AND d.state = 'active';
                WITH gone AS (
                    DELETE FROM latchkey.items it WHERE it.vault = p_vault AND it.deleted
                        AND (it.seq <= v_floor OR it.changed < now() - p_horizon)
                    RETURNING it.seq)
                SELECT count(*), max(seq) INTO v_count, v_removed FROM gone;
                IF v_removed IS NOT NULL AND v_removed > v_floor THEN
                    UPDATE latchkey.vaults SET collected = greatest(collected, v_removed) WHERE id = p_vault;
                END IF;
                RETURN v_count;
            END $$;
            """
        )
    ]

    /// The newest schema version.
    package static var latest: Int { steps.last?.version ?? 0 }

    /// The whole schema as one script (what `latchkey sync schema` prints).
    package static var script: String {
        var text = """
            -- Latchkey sync server schema, version \(latest). Apply as a role with CREATE on the database:
            --   psql "$URL" -v ON_ERROR_STOP=1 -f latchkey-sync.sql
            -- (latchkey sync setup applies it itself when missing.) Plain PostgreSQL 12+; no extension.
            BEGIN;
            \(prelude)

            """
        for step in steps {
            text +=
                "\n-- version \(step.version)\n" + step.sql
                + "\nINSERT INTO latchkey.schema_version VALUES (\(step.version));\n"
        }
        return text + "COMMIT;\n"
    }

    static let prelude = """
        CREATE SCHEMA IF NOT EXISTS latchkey;
        CREATE TABLE IF NOT EXISTS latchkey.schema_version (version integer PRIMARY KEY);
        """

    /// Brings the server's schema to `latest`: creates it, or applies the steps it lacks. Refuses a server
    /// whose schema is newer than this Latchkey knows.
    package static func migrate(_ connection: PostgresConnection) throws(PostgresError) {
        // A schema already current needs nothing, not even CREATE on the database (a device's role may lack it).
        let installed =
            try connection.query(
                "SELECT CASE WHEN to_regclass('latchkey.schema_version') IS NULL THEN 0 ELSE 1 END::int8"
            ).first?.first?.integer ?? 0
        if installed == 1,
            try connection.query("SELECT coalesce(max(version), 0)::int8 FROM latchkey.schema_version").first?.first?
                .integer == Int64(latest)
        {
            return
        }
        try connection.execute("BEGIN")
        do throws(PostgresError) {
            // One migrator at a time across every client of the server.
            try connection.execute("SELECT pg_advisory_xact_lock(7659842331)")
            try connection.execute(prelude)
            let current =
                try connection.query("SELECT coalesce(max(version), 0)::int8 FROM latchkey.schema_version").first?
                .first?.integer ?? 0
            guard current <= latest else {
                throw PostgresError(
                    state: nil,
                    message: "the server's schema is version \(current); this Latchkey knows \(latest): upgrade it",
                    connectionLost: false)
            }
            for step in steps where step.version > current {
                try connection.execute(step.sql)
                try connection.query(
                    "INSERT INTO latchkey.schema_version VALUES ($1::int4)", [.integer(Int64(step.version))])
            }
            try connection.execute("COMMIT")
        } catch {
            if !error.connectionLost { _ = try? connection.execute("ROLLBACK") }  // The original error is what matters.
            throw error
        }
    }
}
