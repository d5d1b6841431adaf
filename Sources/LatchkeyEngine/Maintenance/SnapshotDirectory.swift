package import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyPOSIX

/// The directory that holds a keychain's snapshots (`latchkeyd --backup-directory`, `latchkey backup
/// --directory`): another disk, a synced folder. Snapshots of several keychains may share it; each is told
/// apart by the keychain id in its header. A snapshot is written under a hidden temporary name created
/// 0600 with O_EXCL, synced, then linked to its final name, so a kill at any moment leaves either the whole
/// snapshot or a temporary file that the next snapshot removes — never a half-written snapshot.
package enum SnapshotDirectory {
    /// What a look at the directory found: the snapshots of the keychain, oldest first, and the files
    /// named as snapshots that are not (damaged headers, wrong sizes), with why.
    package struct Listing: Sendable {
        /// The snapshots, oldest first.
        package var snapshots: [KeychainSnapshot] = []
        /// Files named `*.lksnapshot` whose header is damaged or whose size is not the one it promises.
        package var damaged: [(path: String, reason: String)] = []
    }

    /// The variable that names the snapshot directory (for `latchkeyd` and `latchkey backup`).
    package static let environmentVariable = "LATCHKEY_BACKUP_DIRECTORY"

    /// `LATCHKEY_BACKUP_DIRECTORY`, else `configured` (latchkeyd.env's), else
    /// `$XDG_STATE_HOME/latchkey/backups`, else `~/.local/state/latchkey/backups`.
    package static func defaultPath(environment: [String: String], configured: String? = nil) -> String {
        if let named = environment[environmentVariable], !named.isEmpty {
            return resolve(named, environment: environment)
        }
        if let configured, !configured.isEmpty { return resolve(configured, environment: environment) }
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/latchkey/backups" }
        return (environment["HOME"] ?? "/") + "/.local/state/latchkey/backups"
    }

    /// `path` made absolute, a leading `~/` the home directory (so latchkeyd.env, which systemd does not
    /// expand, can name a directory in the home).
    package static func resolve(_ path: String, environment: [String: String]) -> String {
        if path == "~" || path.hasPrefix("~/") {
            return FileSystem.standardizedPath((environment["HOME"] ?? "/") + "/" + path.dropFirst(min(2, path.count)))
        }
        return FileSystem.standardizedPath(path)
    }

    /// The snapshots in `directory` of the keychain `keychainID` (of every keychain when nil), oldest first.
    /// `errSecIO` when the directory cannot be read.
    package static func list(_ directory: String, keychainID: Data?) throws(KeychainError) -> Listing {
        guard let names = Files.entries(of: directory) else {
            throw KeychainError(
                .io,
                "cannot read the backup directory \(directory)"
                    + (FileSystem.exists(directory) ? "" : ": it does not exist"))
        }
        var listing = Listing()
        for name in names.sorted() where name.hasSuffix(KeychainSnapshot.fileExtension) && !name.hasPrefix(".") {
            let path = directory + "/" + name
            do throws(KeychainError) {
                let snapshot = try KeychainSnapshot.header(of: path)
                if keychainID == nil || snapshot.keychainID == keychainID { listing.snapshots.append(snapshot) }
            } catch {
                listing.damaged.append((path, error.message))
            }
        }
        listing.snapshots.sort { ($0.taken, $0.path) < ($1.taken, $1.path) }
        return listing
    }

    /// `list`, with a missing directory listed as empty (it is made with the first snapshot).
    package static func listIfPresent(_ directory: String, keychainID: Data?) throws(KeychainError) -> Listing {
        FileSystem.exists(directory) ? try list(directory, keychainID: keychainID) : Listing()
    }

    /// The newest snapshot taken at or before `time`, or nil.
    package static func latest(in listing: Listing, atOrBefore time: Date) -> KeychainSnapshot? {
        listing.snapshots.last { $0.taken <= time }
    }

    /// `<stem>.<UTC time to the millisecond>.lksnapshot`, the stem the keychain file's name up to its first dot:
    /// `login.20261205T134002.123Z.lksnapshot`. Names sort as the times do.
    static func fileName(stem: String, taken: Date, bump: Int) -> String {
        stem + "." + SnapshotTime.compact(taken.addingTimeInterval(Double(bump) / 1_000))
            + KeychainSnapshot.fileExtension
    }

    /// Writes `file` (its parts one after another) as a new snapshot named for `stem` and `taken` (a millisecond later, and so on, when
    /// the name is taken). `errSecIO` (`errSecDiskFull` for a full disk) when the directory cannot be written.
    static func write(_ file: [[UInt8]], into directory: String, stem: String, taken: Date) throws(KeychainError)
        -> String
    {
        let temporary =
            directory + "/." + stem + KeychainSnapshot.fileExtension + ".writing-\(CurrentProcess.id)-"
            + Hex.encode(SecureRandom.bytes(6))
        do {
            try Files.createExclusive(temporary, parts: file)
        } catch {
            throw KeychainError(
                error == .noSpace ? .diskFull : .io, "cannot write a snapshot in \(directory): \(error)")
        }
        for bump in 0..<1_000 {
            let path = directory + "/" + fileName(stem: stem, taken: taken, bump: bump)
            do {
                try Files.link(temporary, to: path)
            } catch {
                if error == .fileExists { continue }
                removeQuietly(temporary)
                throw KeychainError(.io, "cannot create \(path): \(error)")
            }
            removeQuietly(temporary)
            Files.syncDirectory(directory)
            return path
        }
        removeQuietly(temporary)
        throw KeychainError(.io, "cannot name a snapshot in \(directory): every name of this second is taken")
    }

    /// Removes the oldest snapshots of `keychainID` beyond the newest `keep`, and the temporary files of
    /// snapshot writers that are gone (killed mid-write). Returns the snapshots removed.
    @discardableResult
    static func prune(_ directory: String, keychainID: Data, keep: Int) throws(KeychainError) -> [KeychainSnapshot] {
        for name in Files.entries(of: directory) ?? []
        where name.hasPrefix(".") && name.contains(".lksnapshot.writing-") {
            let marker = ".lksnapshot.writing-"
            guard let tail = name.split(separator: marker, maxSplits: 1).dropFirst().first else { continue }
            let pid = Int32(tail.prefix { $0 != "-" })
            if let pid, pid != CurrentProcess.id, !Processes.exists(pid) { removeQuietly(directory + "/" + name) }
        }
        let snapshots = try list(directory, keychainID: keychainID).snapshots
        let removed = Array(snapshots.dropLast(max(1, keep)))
        for snapshot in removed {
            do throws(KeychainError) {
                try FileSystem.removeFile(snapshot.path)
            } catch {
                throw KeychainError(.io, "cannot remove the old snapshot \(snapshot.path): \(error.message)")
            }
        }
        if !removed.isEmpty { Files.syncDirectory(directory) }
        return removed
    }

    private static func removeQuietly(_ path: String) {
        // A leftover temporary file holds nothing the snapshots do not; the next prune removes it.
        do { try Files.remove(path) } catch { return }
    }
}
