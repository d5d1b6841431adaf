internal import LatchkeyCrypto
internal import LatchkeyStorage

/// The SQL schema of the keychain file and its migrations (`PRAGMA user_version` is the format version).
/// A file of an older format is migrated when it is opened, in one transaction: it is either the old
/// format, whole, or the new one.
///
/// Format v1:
/// - `meta`: the keychain id, the KDF record, the key-check value, the two sealed keybags, settings;
/// - `items`: one row per item (see `ItemRow`); a UNIQUE index over (primary-key digest — which covers the
///   class —, access-group digest, sync) enforces Apple's uniqueness rule, tombstones included. Persistent
///   references name a row by its number, so the random item id needs no index;
/// - `item_index`: (digest of class + attribute + value, item row) pairs, so any attribute is found through
///   an index, never by decrypting the table.
///
/// Format v2:
/// - `changes`: the change feed — one row per mutation of an item (its id, row, class, kind, version, sync
///   flag and origin; no value), in commit order (`seq`, never reused);
/// - the primary-key uniqueness covers live items only (a partial index), and tombstones have a partial
///   index of their own: a tombstone is never removed to make room for another item, so its deletion can
///   still sync.
///
/// Format v3:
/// - `items.acl`: the item's access-control flags (`AccessControlFlags`, 0 for none), so a lookup knows
///   whether the user must confirm before the secret is released without decrypting the attributes. The
///   column is bound into the item key's associated data whenever it is not 0, so clearing it makes the row
///   fail to open rather than release the secret unconfirmed.
///
/// Format v4 (sync; every table empty until the keychain is set up for sync):
/// - `items_by_id`: items by their random id, which sync names them by;
/// - `sync_state`: the vault this keychain syncs with, this device's id and the server cursor;
/// - `sync_items`: per synced item, the version the server holds as far as this device knows (what a push
///   expects, and below which a row is a replay);
/// - `sync_inbox`: rows pulled but not applied yet (still under the vault key: a locked keychain stores them
///   until it can write the items);
/// - `sync_conflicts`: losing versions, sealed under the vault key, until the user restores or drops them;
/// - `sync_rejected`: rows the server sent that failed verification, with the reason (no content);
/// - `sync_dirty`: the ids of synchronizable items written since sync last looked at them, kept by
///   triggers on `items`, so a push examines what changed rather than every item.
///
/// Format v5:
/// - no trigger on inserts into `items`: the one code that inserts item rows (`ItemStore`) marks a new
///   synchronizable item in `sync_dirty` itself, unless sync wrote it as the server has it (a pulled item,
///   which the trigger marked only for the same transaction to clear again). Updates and deletions are still
///   marked by their triggers.
///
/// Format v6 (issue 53: who may read an item besides its access group, and who did):
/// - `item_access`: items' access lists — one row per (item, program): the item's random id, a keyed digest
///   of the program's identity (so "which items may this program read" is an index lookup), and the entry
///   itself sealed under a key derived from the `ck` class key (`KeychainDatabase+AccessLists.swift`).
///   `ItemStore` drops an item's rows when it deletes the item or turns it into a tombstone;
/// - `access_log`: the access log — one sealed entry per read, change, deletion or refusal the agent served,
///   in order (`seq`, never reused), bounded (`KeychainDatabase+AccessLog.swift`).
enum KeychainSchema {
    /// `PRAGMA application_id`: "LKCH". A SQLite file without it is not a Latchkey keychain.
    static let applicationID: Int64 = 0x4C4B_4348
    /// The newest format this code reads and writes.
    static var currentVersion: Int { migrator.latestVersion }

    static let migrator = Migrator(steps: [
        Migrator.Step(version: 1) { db in
            try db.execute(
                """
                CREATE TABLE meta (
                    name TEXT PRIMARY KEY NOT NULL,
                    value BLOB NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE items (
                    row_id INTEGER PRIMARY KEY,
                    id BLOB NOT NULL,
                    class TEXT NOT NULL,
                    agrp BLOB NOT NULL,
                    pdmn TEXT NOT NULL,
                    sync INTEGER NOT NULL,
                    tomb INTEGER NOT NULL,
                    version INTEGER NOT NULL,
                    pk BLOB NOT NULL,
                    idx BLOB NOT NULL,
                    item_key BLOB NOT NULL,
                    attrs BLOB NOT NULL,
                    data BLOB
                );
                CREATE UNIQUE INDEX items_by_primary_key ON items (pk, agrp, sync);
                CREATE INDEX items_by_group ON items (agrp, class);
                CREATE TABLE item_index (
                    digest BLOB NOT NULL,
                    item INTEGER NOT NULL,
                    PRIMARY KEY (digest, item)
                ) WITHOUT ROWID;
                PRAGMA application_id = \(applicationID);
                """)
        },
        Migrator.Step(version: 2) { db in
            try db.execute(
                """
                CREATE TABLE changes (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    item BLOB NOT NULL,
                    row INTEGER NOT NULL,
                    class TEXT NOT NULL,
                    kind INTEGER NOT NULL,
                    version INTEGER NOT NULL,
                    sync INTEGER NOT NULL,
                    origin INTEGER NOT NULL
                );
                DROP INDEX items_by_primary_key;
                CREATE UNIQUE INDEX items_by_primary_key ON items (pk, agrp, sync) WHERE tomb = 0;
                CREATE INDEX items_tombstones ON items (pk, agrp, sync) WHERE tomb = 1;
                """)
        },
        Migrator.Step(version: 3) { db in
            try db.execute("ALTER TABLE items ADD COLUMN acl INTEGER NOT NULL DEFAULT 0")
        },
        Migrator.Step(version: 4) { db in
            try db.execute(
                """
                CREATE INDEX items_by_id ON items (id);
                CREATE TABLE sync_state (
                    name TEXT PRIMARY KEY NOT NULL,
                    value BLOB NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE sync_items (
                    item BLOB PRIMARY KEY NOT NULL,
                    version INTEGER NOT NULL,
                    deleted INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE sync_inbox (
                    seq INTEGER PRIMARY KEY,
                    item BLOB NOT NULL,
                    version INTEGER NOT NULL,
                    deleted INTEGER NOT NULL,
                    key_id INTEGER NOT NULL,
                    ciphertext BLOB NOT NULL,
                    author BLOB NOT NULL
                );
                CREATE INDEX sync_inbox_by_item ON sync_inbox (item);
                CREATE TABLE sync_conflicts (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    item BLOB NOT NULL,
                    version INTEGER NOT NULL,
                    key_id INTEGER NOT NULL,
                    sealed BLOB NOT NULL,
                    reason TEXT NOT NULL,
                    recorded INTEGER NOT NULL
                );
                CREATE TABLE sync_dirty (
                    item BLOB PRIMARY KEY NOT NULL
                ) WITHOUT ROWID;
                CREATE TRIGGER items_sync_dirty_insert AFTER INSERT ON items WHEN NEW.sync = 1
                BEGIN INSERT OR IGNORE INTO sync_dirty (item) VALUES (NEW.id); END;
                CREATE TRIGGER items_sync_dirty_update AFTER UPDATE ON items WHEN NEW.sync = 1 OR OLD.sync = 1
                BEGIN INSERT OR IGNORE INTO sync_dirty (item) VALUES (NEW.id); END;
                CREATE TRIGGER items_sync_dirty_delete AFTER DELETE ON items WHEN OLD.sync = 1
                BEGIN INSERT OR IGNORE INTO sync_dirty (item) VALUES (OLD.id); END;
                CREATE TABLE sync_rejected (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    seq INTEGER NOT NULL,
                    item BLOB NOT NULL,
                    version INTEGER NOT NULL,
                    reason TEXT NOT NULL,
                    recorded INTEGER NOT NULL
                );
                """)
        },
        Migrator.Step(version: 5) { db in
            try db.execute("DROP TRIGGER items_sync_dirty_insert")
        },
        Migrator.Step(version: 6) { db in
            try db.execute(
                """
                CREATE TABLE item_access (
                    item BLOB NOT NULL,
                    program BLOB NOT NULL,
                    sealed BLOB NOT NULL,
                    PRIMARY KEY (item, program)
                ) WITHOUT ROWID;
                CREATE INDEX item_access_by_program ON item_access (program);
                CREATE TABLE access_log (
                    seq INTEGER PRIMARY KEY AUTOINCREMENT,
                    sealed BLOB NOT NULL
                );
                """)
        },
    ])

    /// The schema a keychain of the current format has, as `schemaRows` lists it, and the statements that
    /// make it: built once per process by migrating an empty in-memory database through every step.
    static let current: Result<(rows: [String], statements: [String], image: [UInt8]), any Error> = Result {
        let db = try Connection(path: ":memory:", mode: .memory)
        _ = try migrator.migrate(db)
        // In the order the migration made them (which index SQLite weighs first can depend on it). The
        // objects SQLite makes by itself — `sqlite_sequence` for AUTOINCREMENT, the automatic indexes of
        // UNIQUE and PRIMARY KEY constraints (no SQL) — come with the statements that caused them.
        var statements: [String] = []
        try db.forEachRow("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid") { row in
            if row.text(0) != "sqlite_sequence", let sql = row.text(1) { statements.append(sql) }
        }
        return (try schemaRows(db), statements, try db.image())
    }

    /// A new in-memory database of the current format: a copy of the empty one `current` migrated (SQLite
    /// then only reads the schema, instead of building every object).
    static func newInMemoryDatabase() throws -> Connection {
        try Connection(image: current.get().image)
    }

    /// The schema a keychain of the current format has, as `schemaRows` lists it.
    static var expectedSchema: Result<[String], any Error> { current.map(\.rows) }

    /// Gives an empty database the current format at once, in one transaction: the tables, indexes and
    /// triggers the migration steps end with, created as they stand (replaying the steps re-reads the
    /// whole schema at the `ALTER TABLE` and costs several times more — every new keychain, in-memory ones
    /// included, pays it). `NewKeychainFormatTests` checks the result against a migrated file, object by
    /// object.
    static func createCurrent(_ db: Connection) throws {
        let statements = try current.get().statements
        try db.transaction(writing: true) {
            guard try migrator.currentVersion(of: db) == 0, try db.integer("SELECT count(*) FROM sqlite_master") == 0
            else {
                throw KeychainError(.internal, "a new keychain's database is not empty")
            }
            try db.execute(statements.joined(separator: ";\n") + ";")
            try db.execute("PRAGMA user_version = \(currentVersion); PRAGMA application_id = \(applicationID)")
        }
    }

    /// Every table and index of `db` with its SQL, sorted.
    static func schemaRows(_ db: Connection) throws -> [String] {
        var rows: [String] = []
        try db.forEachRow("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name") { row in
            rows.append(
                [row.text(0), row.text(1), row.text(2), row.text(3)].map { $0 ?? "NULL" }.joined(separator: "|"))
        }
        return rows
    }

    /// Refuses a file whose tables or indexes are not exactly the current format's: a damaged or altered
    /// schema would otherwise surface later as a failing statement. Compared by digest with
    /// `expectedSchemaDigest`, so opening a keychain does not first build the current schema in memory by
    /// replaying every migration (1.3 ms of latchkeyd's cold start: issue 56).
    static func verify(_ db: Connection, path: String) throws {
        guard digest(of: try schemaRows(db)) == expectedSchemaDigest else {
            throw KeychainError(.invalidKeychain, "\(path) is damaged: its tables are not a keychain's")
        }
    }

    /// BLAKE2b-256, in hex, of the current format's schema rows as the migrations make them (`expectedSchema`,
    /// `digest(of:)`). A new format version changes it: `KeychainSchemaDigestTests` fails until this is the
    /// digest of what the migrations make.
    static let expectedSchemaDigest = "912977cfc65be57bf68c30e3f7f889ba992df4de7a0f9c6c08549d9549017f70"

    /// BLAKE2b-256, in hex, of schema rows joined by newlines.
    static func digest(of rows: [String]) -> String {
        var output = [UInt8](repeating: 0, count: 32)
        let text = Array(rows.joined(separator: "\n").utf8)
        text.withUnsafeBytes { input in output.withUnsafeMutableBytes { Blake2b.hash([input], into: $0) } }
        return Hex.encode(output)
    }
}
