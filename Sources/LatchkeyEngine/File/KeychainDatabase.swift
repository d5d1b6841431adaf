import FoundationEssentials
internal import LatchkeyCrypto
import LatchkeyPOSIX
internal import LatchkeyStorage

/// An open keychain: the encrypted item store with Apple's Keychain Services semantics.
///
/// One `KeychainDatabase` can serve many callers: every operation names the `CallerIdentity` it runs for.
/// It is safe to use from many threads at once, and several processes may open the same file.
///
/// ```swift
/// let keychain = try KeychainDatabase.create(at: path, passphrase: Passphrase("correct horse"))
/// let caller = CallerIdentity(applicationIdentifier: "com.example.app")
/// try keychain.add(NewItem(.genericPassword,
///                          attributes: [.service: .string("mail"), .account: .string("alice")],
///                          data: Data("hunter2".utf8)), caller: caller)
/// ```
public final class KeychainDatabase: Sendable {
    /// The keychain file, or nil for an in-memory keychain.
    public let path: String?
    /// The writer and the readers (readers on connections of their own: a long write never stalls a read).
    let pool: DatabasePool
    let vault = KeyVault()
    /// The access log's journal beside the file (none in memory).
    let accessJournal: AccessJournal?

    private init(path: String?, pool: DatabasePool) {
        self.path = path
        self.pool = pool
        self.accessJournal = path.map { AccessJournal(keychainPath: $0) }
    }

    deinit { vault.wipeAll() }

    // MARK: Creating and opening

    /// Creates a new keychain file at `path` (and its directory, mode 0700), protected by `passphrase`,
    /// and returns it unlocked. Fails with `errSecDuplicateKeychain` if a file is already there.
    public static func create(
        at path: String, passphrase: Passphrase, keyDerivation: KeyDerivation = .default
    ) throws(KeychainError) -> KeychainDatabase {
        guard passphrase.byteCount > 0 else { throw KeychainError.param("the passphrase must not be empty") }
        try keyDerivation.validate()
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        try FileSystem.createPrivateDirectory(directory)
        try FileSystem.requirePrivateDirectory(directory, what: "keychain directory")
        if FileSystem.exists(path) { throw KeychainError(.duplicateKeychain, "\(path) already exists") }
        removeAbandonedCreations(of: path)

        let material = KeyMaterial.generate()
        let keychainID = SecureRandom.bytes(16)
        let kdf = KDFRecord.fresh(.argon2id13, parameters: keyDerivation.parameters)
        let master = try kdf.deriveMasterKey(from: passphrase)
        let deviceKey = SecureBytes(randomCount: AEAD.keyLength)

        let temporary = creationPrefix(of: path) + "\(CurrentProcess.id)-" + Hex.encode(SecureRandom.bytes(6))
        try FileSystem.createExclusiveFile(temporary, contents: Data())
        do {
            try FileSystem.prepareCompanions(of: temporary)
            try mappingStorageErrors {
                let connection = try Connection(path: temporary, mode: .readWrite)
                try configure(connection, inMemory: false)
                try KeychainSchema.createCurrent(connection)
                try connection.transaction(writing: true) {
                    try writeInitialMeta(
                        connection, keychainID: keychainID, kdf: kdf, master: master, material: material,
                        deviceKey: deviceKey)
                }
            }  // The connection closes here: SQLite checkpoints and removes the temporary WAL.
            try FileSystem.moveNoReplace(temporary, to: path)
            for suffix in ["-wal", "-shm"] {
                try? FileSystem.removeFile(temporary + suffix)  // SQLite removed them at close; nothing is lost if not.
            }
        } catch {
            for suffix in ["", "-wal", "-shm"] {
                try? FileSystem.removeFile(temporary + suffix)  // Cleanup; the original error is reported.
            }
            throw error
        }
        try DeviceKeyFile.write(path: DeviceKeyFile.path(forKeychain: path), keychainID: keychainID, key: deviceKey)
        FileSystem.syncDirectory(directory)

        let database = try open(at: path)
        database.vault.installAll(material)
        return database
    }

    /// Opens an existing keychain file, locked. `dk`/`dku` items are available at once when the device key
    /// file is beside it; everything else after `unlock(with:)`.
    ///
    /// Refuses (changing nothing) a missing file (`errSecNoSuchKeychain`), a file or directory others can
    /// write (`errSecWrPerm`), and a foreign, truncated or newer-format file (`errSecInvalidKeychain`).
    public static func open(at path: String) throws(KeychainError) -> KeychainDatabase {
        try open(at: path, readerConnections: 4)
    }

    /// `open(at:)` with at most `readerConnections` reader connections; 0 runs every read on the writer's
    /// connection, one at a time (the design before the pool, which `latchkey-bench` measures beside it).
    package static func open(at path: String, readerConnections: Int) throws(KeychainError) -> KeychainDatabase {
        guard FileSystem.exists(path) else { throw KeychainError(.noSuchKeychain, "\(path) does not exist") }
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        try FileSystem.requirePrivateDirectory(directory, what: "keychain directory")
        try FileSystem.requirePrivateFile(path, what: "keychain file")
        try KeychainHeader.check(path: path)
        let madeCompanions = try FileSystem.prepareCompanions(of: path)
        do {
            return try openPrepared(at: path, readerConnections: readerConnections)
        } catch {
            // Not a keychain at all: leave the file as it was found. (Any other failure may be a moment of
            // contention with a process that is opening it too and already uses the files made here.)
            if error.status == .invalidKeychain { FileSystem.removeUnusedCompanions(madeCompanions) }
            throw error
        }
    }

    private static func openPrepared(at path: String, readerConnections: Int) throws(KeychainError) -> KeychainDatabase
    {
        let connection: Connection
        do {
            connection = try Connection(path: path, mode: .readWrite)
            // Another process may hold a lock at this very moment (writing, checkpointing, recovering the
            // log): wait for it as every later transaction does, instead of failing the open.
            connection.setBusyTimeout(milliseconds: 2_000)
            try BusyRetry.run { try checkAndPrepare(connection, path: path) }
        } catch let error as KeychainError {
            throw error
        } catch let error as StorageError {
            // Opening runs only fixed statements, so a generic error here means SQLite could not read the
            // file's header or schema: the file's fault, not a statement's.
            if error.isCorruptOrForeign || error.isGeneric {
                throw KeychainError(.invalidKeychain, "\(path) is damaged or not a keychain (SQLite: \(error.message))")
            }
            throw KeychainError(storage: error)
        } catch {
            throw KeychainError(.internal, "\(error)")
        }

        // A reader: another connection to the same file, with the same settings, that cannot write.
        let makeReader: @Sendable () throws -> Connection = {
            let reader = try Connection(path: path, mode: .readWrite)
            try configure(reader, inMemory: false)
            try reader.execute("PRAGMA query_only = ON")
            return reader
        }
        let database = KeychainDatabase(
            path: path,
            pool: DatabasePool(
                writer: connection, maximumReaders: max(1, readerConnections),
                makeReader: readerConnections > 0 ? makeReader : nil))
        let meta = try database.readKeyMeta()
        guard meta.kdf.algorithm == .argon2id13, meta.kdf.parameters.isWithinBounds else {
            throw KeychainError(
                .invalidKeychain,
                "\(path) uses key derivation parameters (\(meta.kdf.parameters)) outside the accepted range")
        }
        try database.loadDeviceTier(keychainID: meta.keychainID)
        return database
    }

    /// A keychain that lives in memory only: no file, no Argon2id, created unlocked. Same engine, same
    /// semantics and status codes; `lock()` and `unlock(with:)` work with `passphrase`.
    public static func inMemory(passphrase: Passphrase = Passphrase("latchkey-in-memory")) -> KeychainDatabase {
        do {
            return try mappingStorageErrors {
                let connection = try KeychainSchema.newInMemoryDatabase()
                try configure(connection, inMemory: true)
                let material = KeyMaterial.generate()
                let kdf = KDFRecord.fresh(.memoryOnly, parameters: KDFParameters(passes: 0, memoryBytes: 0))
                let master = try kdf.deriveMasterKey(from: passphrase)
                try connection.transaction(writing: true) {
                    try writeInitialMeta(
                        connection, keychainID: SecureRandom.bytes(16), kdf: kdf, master: master, material: material,
                        deviceKey: nil)
                }
                let database = KeychainDatabase(path: nil, pool: DatabasePool(writer: connection, makeReader: nil))
                database.vault.installAll(material)
                return database
            }
        } catch {
            // An in-memory SQLite database fails to open only when memory is exhausted.
            fatalError("cannot create an in-memory keychain: \(error)")
        }
    }

    /// Removes a keychain file and its companions (WAL, shared memory, device key).
    public static func delete(at path: String) throws(KeychainError) {
        guard FileSystem.exists(path) else { throw KeychainError(.noSuchKeychain, "\(path) does not exist") }
        try FileSystem.removeFile(path)
        for companion in companionPaths(of: path) { try FileSystem.removeFile(companion) }
        FileSystem.syncDirectory(URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }

    /// The device key file beside a keychain (written just after a new keychain's file is renamed into place).
    package static func deviceKeyPath(of path: String) -> String { DeviceKeyFile.path(forKeychain: path) }

    /// The files that belong to a keychain besides the database itself.
    package static func companionPaths(of path: String) -> [String] {
        [
            path + "-wal", path + "-shm", DeviceKeyFile.path(forKeychain: path), path + ".agent-lock",
            path + "-accesslog", path + "-accesslog-fold",
        ]
    }

    /// A new keychain is built under `.<name>.creating-<pid>-<random>` and renamed into place when whole.
    private static func creationPrefix(of path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().path + "/." + url.lastPathComponent + ".creating-"
    }

    /// Removes what a creation of `path` left behind when its process died half-way (its pid is gone).
    private static func removeAbandonedCreations(of path: String) {
        let prefix = creationPrefix(of: path)
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let start = URL(fileURLWithPath: prefix).lastPathComponent
        for name in Files.entries(of: directory) ?? [] where name.hasPrefix(start) {
            let rest = name.dropFirst(start.count)
            guard let pid = rest.split(separator: "-").first.flatMap({ Int32($0) }), !Processes.exists(pid) else {
                continue
            }
            // Cleanup of a dead process's half-made file: one that cannot be removed is simply left.
            try? FileSystem.removeFile(directory + "/" + name)
        }
    }

    /// Checks that an open connection is a keychain this code reads (application id, format version,
    /// schema), brings its format up to date and applies the connection settings.
    private static func checkAndPrepare(_ connection: Connection, path: String) throws {
        let applicationID = try connection.integer("PRAGMA application_id") ?? 0
        guard applicationID == KeychainSchema.applicationID else {
            throw KeychainError(.invalidKeychain, "\(path) is an SQLite database but not a Latchkey keychain")
        }
        let version = Int(try connection.integer("PRAGMA user_version") ?? 0)
        guard version <= KeychainSchema.currentVersion else {
            throw KeychainError(
                .invalidKeychain,
                "\(path) has format version \(version); this Latchkey reads up to \(KeychainSchema.currentVersion). Nothing was changed"
            )
        }
        try configure(connection, inMemory: false)
        if version < KeychainSchema.currentVersion { _ = try KeychainSchema.migrator.migrate(connection) }
        try KeychainSchema.verify(connection, path: path)
    }

    private static func configure(_ connection: Connection, inMemory: Bool) throws {
        if !inMemory {
            let mode = try connection.blob("PRAGMA journal_mode = WAL").flatMap { String(data: $0, encoding: .utf8) }
            guard mode?.lowercased() == "wal" else {
                throw KeychainError(
                    .io, "the keychain file cannot use write-ahead logging (journal mode \(mode ?? "?"))")
            }
        }
        // A 32 MiB page cache: large keychains keep their index pages in memory instead of re-reading them.
        // The WAL file is cut back to 8 MiB once checkpointed: a bulk write (`DatabasePool.bulkWrite`) lets it
        // grow to 64 MiB, and SQLite would otherwise keep that size on disk for as long as the file is open.
        try connection.execute(
            """
            PRAGMA cache_size = -32768;
            PRAGMA journal_size_limit = 8388608;
            PRAGMA synchronous = FULL;
            PRAGMA secure_delete = ON;
            PRAGMA temp_store = MEMORY;
            PRAGMA cell_size_check = ON;
            PRAGMA trusted_schema = OFF;
            """)
    }

    private static func writeInitialMeta(
        _ connection: Connection, keychainID: Data, kdf: KDFRecord, master: MasterKey, material: KeyMaterial,
        deviceKey: SecureBytes?
    ) throws {
        try MetaTable.set(.keychainID, keychainID, in: connection)
        try MetaTable.set(.kdf, kdf.encoded(), in: connection)
        try MetaTable.set(.keyCheck, master.keyCheck, in: connection)
        let keybag = AEAD.seal(
            KeybagFormat.encodeFull(material), key: master.wrapKey,
            associatedData: keybagAssociatedData(keychainID: keychainID, kdf: kdf))
        try MetaTable.set(.keybag, keybag, in: connection)
        if let deviceKey {
            let deviceKeybag = AEAD.seal(
                KeybagFormat.encodeDevice(material), key: deviceKey,
                associatedData: DeviceKeyFile.associatedData(keychainID: keychainID))
            try MetaTable.set(.deviceKeybag, deviceKeybag, in: connection)
        }
    }

    static func keybagAssociatedData(keychainID: Data, kdf: KDFRecord) -> Data {
        Data("latchkey/v1/keybag".utf8) + keychainID + kdf.encoded()
    }
}
