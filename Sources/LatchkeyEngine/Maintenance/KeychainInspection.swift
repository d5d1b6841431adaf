import FoundationEssentials
import LatchkeyPOSIX
internal import LatchkeyStorage

/// What a keychain file looks like from the outside, read without the passphrase and without writing:
/// for `latchkey doctor` and `show-keychain-info`.
package struct KeychainFileReport: Sendable {
    /// The file.
    package let path: String
    /// Permission bits of the file, its directory and its device key (nil when missing).
    package let fileMode: Int?, directoryMode: Int?, deviceKeyMode: Int?
    /// Whether the file belongs to the current user (or the current user is root).
    package let ownedByCurrentUser: Bool
    /// Why the file cannot be opened, when it cannot (not a keychain, truncated, newer, unsafe permissions).
    package let problem: KeychainError?
    /// The format version written in the file.
    package let formatVersion: Int?
    /// The newest format this Latchkey reads.
    package let supportedFormatVersion: Int
    /// The Argon2id parameters.
    package let keyDerivation: KeyDerivation?
    /// Rows in the file (tombstones included).
    package let rows: Int?
    /// Whether the device key beside the file opens the device keybag.
    package let deviceKeyWorks: Bool
    /// The bytes of the WAL beside the file (0 when there is none).
    package let walBytes: Int64
    /// The durability settings in force on a connection the engine opens: the journal mode (`wal`),
    /// `synchronous` (2, FULL: every commit is synced before it is acknowledged) and `secure_delete`.
    package let durability: Durability?
    /// The TPM binding of an enrolled keychain, with what the TPM says now (nil when not enrolled: then no
    /// TPM is asked).
    package let tpm: TPMBinding?

    /// What `PRAGMA journal_mode`, `synchronous` and `secure_delete` answer on an engine connection.
    package struct Durability: Sendable, Equatable {
        /// `wal` for a keychain.
        package let journalMode: String
        /// 0 OFF, 1 NORMAL, 2 FULL, 3 EXTRA.
        package let synchronous: Int
        /// Whether freed pages are zeroed.
        package let secureDelete: Bool

        /// Settings as read from a connection.
        package init(journalMode: String, synchronous: Int, secureDelete: Bool) {
            self.journalMode = journalMode
            self.synchronous = synchronous
            self.secureDelete = secureDelete
        }

        /// Whether an acknowledged write survives a power cut and freed pages are zeroed.
        package var isDurable: Bool { journalMode == "wal" && synchronous >= 2 && secureDelete }
    }
}

extension KeychainDatabase {
    /// Inspects a keychain file without unlocking it or writing to it.
    package static func inspect(at path: String) -> KeychainFileReport {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let devicePath = DeviceKeyFile.path(forKeychain: path)
        let info = FileSystem.status(path)
        let me = CurrentProcess.effectiveUserID
        var problem: KeychainError?
        var version: Int?
        var derivation: KeyDerivation?
        var rows: Int?
        var deviceKeyWorks = false
        var durability: KeychainFileReport.Durability?
        var tpm: TPMBinding?
        do {
            let database = try open(at: path)
            version = try mappingStorageErrors {
                try database.pool.read { db in Int(try db.integer("PRAGMA user_version") ?? 0) }
            }
            durability = try mappingStorageErrors {
                try database.pool.read { db in
                    KeychainFileReport.Durability(
                        journalMode: try db.blob("PRAGMA journal_mode").map { String(decoding: $0, as: UTF8.self) }
                            ?? "?",
                        synchronous: Int(try db.integer("PRAGMA synchronous") ?? -1),
                        secureDelete: try db.integer("PRAGMA secure_delete") == 1)
                }
            }
            derivation = try database.keyDerivation
            rows = try database.rowCount()
            deviceKeyWorks = database.vault.snapshot().indexKey != nil
            if try database.readKeyMeta().tpm != nil { tpm = try database.tpmBinding }
        } catch {
            problem = error
        }
        return KeychainFileReport(
            path: path, fileMode: info.map { Int($0.permissions & 0o7777) },
            directoryMode: FileSystem.status(directory).map { Int($0.permissions & 0o7777) },
            deviceKeyMode: FileSystem.status(devicePath).map { Int($0.permissions & 0o7777) },
            ownedByCurrentUser: info.map { me == 0 || $0.owner == me } ?? false, problem: problem,
            formatVersion: version, supportedFormatVersion: KeychainSchema.currentVersion, keyDerivation: derivation,
            rows: rows, deviceKeyWorks: deviceKeyWorks, walBytes: FileSystem.status(path + "-wal")?.size ?? 0,
            durability: durability, tpm: tpm)
    }
}
