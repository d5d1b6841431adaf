import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyPOSIX

/// A snapshot's database, verified, written to a private temporary directory and opened as a keychain of
/// its own (locked): unlock it with the keychain's passphrase of the snapshot's time and read its items.
/// The files go when the copy does (`close()`, or at the latest its deinit). It is never the keychain
/// itself: what is restored from it is written through the keychain's own restore.
package final class SnapshotCopy: Sendable {
    /// The snapshot it was made from.
    package let snapshot: KeychainSnapshot
    /// The snapshot's keychain, opened from the copy.
    package let keychain: KeychainDatabase
    private let directory: String

    /// Verifies `path` (`errSecDecode` when it is damaged: nothing is written then) and opens its database.
    package init(_ path: String, environment: [String: String]) throws(KeychainError) {
        let (snapshot, database) = try KeychainSnapshot.verifiedDatabase(at: path)
        let base =
            environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        let directory = base + "/latchkey-snapshot-" + Hex.encode(SecureRandom.bytes(8))
        do {
            try Files.makeDirectory(directory, mode: 0o700)
        } catch {
            throw KeychainError(.io, "cannot create \(directory) to open the snapshot: \(error)")
        }
        let file = directory + "/" + "snapshot.keychain"
        do throws(KeychainError) {
            try FileSystem.createExclusiveFile(file, contents: Data(database))
            self.keychain = try KeychainDatabase.open(at: file, readerConnections: 1)
        } catch {
            Self.remove(directory)
            throw error
        }
        self.snapshot = snapshot
        self.directory = directory
    }

    deinit { Self.remove(directory) }

    /// Removes the temporary copy (its keys are forgotten first).
    package func close() {
        keychain.forgetAllKeys()
        Self.remove(directory)
    }

    private static func remove(_ directory: String) {
        // Best effort: what is left is the snapshot's own ciphertext in a private directory.
        for name in Files.entries(of: directory) ?? [] {
            do { try Files.remove(directory + "/" + name) } catch { continue }
        }
        do { try Files.removeDirectory(directory) } catch { return }
    }
}
