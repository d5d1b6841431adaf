internal import FoundationEssentials
internal import LatchkeyCrypto
package import LatchkeyEngine

/// The vault's devices and the conflict records.
extension SyncClient {
    /// The vault's devices as the server lists them (removed ones included).
    package func devices() throws(KeychainError) -> [SyncDeviceStatus] {
        let server = try connection()
        return try serverCall { try server.devices(vault: configuration.vault) }.filter { $0.state != "recovery" }.map {
            SyncDeviceStatus(
                name: $0.name, state: $0.state, lastSeen: $0.lastSeen, isThisDevice: $0.id == configuration.device,
                verified: VaultCrypto.isApproved($0, vault: configuration.vault, keyring: configuration.keyring))
        }
    }

    /// The conflict records, each opened (nil content when it cannot be: sealed under a key this device lacks).
    package func conflicts() throws(KeychainError) -> [(conflict: SyncConflict, record: SyncRecord?)] {
        try keychain.sync.conflicts().map { conflict in
            // A record this device cannot open is still listed, without content.
            (conflict, try? openConflict(conflict))
        }
    }

    /// Restores conflict `id` as a local change (pushed by the next round).
    package func restoreConflict(_ id: Int64) throws(KeychainError) {
        guard let conflict = try keychain.sync.conflicts().first(where: { $0.id == id }) else {
            throw SyncFailure.noSuchConflict.error(.itemNotFound, "there is no conflict \(id)")
        }
        try keychain.sync.restoreConflict(id, record: try openConflict(conflict))
    }

    private func openConflict(_ conflict: SyncConflict) throws(KeychainError) -> SyncRecord {
        // Conflict records are sealed as rows of this device with the item's version and a live flag.
        let envelope = SyncEnvelope(
            sequence: 0, itemID: conflict.itemID, version: conflict.version, deleted: false,
            keyID: conflict.keyID, ciphertext: conflict.sealed, author: configuration.device)
        do throws(KeychainError) {
            return try VaultCrypto.open(envelope, vault: configuration.vault, keyring: configuration.keyring)
        } catch {
            var deletion = envelope
            deletion.deleted = true
            return try VaultCrypto.open(deletion, vault: configuration.vault, keyring: configuration.keyring)
        }
    }
}
