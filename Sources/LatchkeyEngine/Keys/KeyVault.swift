import Foundation
import Synchronization
internal import LatchkeyCrypto

/// The keys a keychain holds in memory, and the lock state. Locking drops the `ak`-family class keys; the
/// `SecureBytes` that held them wipe themselves when the last operation using them finishes.
final class KeyVault: Sendable {
    struct Snapshot: Sendable {
        let classKeys: [Accessibility: SecureBytes]
        let indexKey: SecureBytes?
        let lockState: LockState
        /// Access-group digests already computed under `indexKey` (see `groupDigest`).
        let groupDigests: [String: Data]

        func classKey(for accessibility: Accessibility) -> SecureBytes? { classKeys[accessibility] }
    }

    private struct State: Sendable {
        var classKeys: [Accessibility: SecureBytes] = [:]
        var indexKey: SecureBytes? {
            didSet { groupDigests = [:] }  // Digests are only valid under the key that made them.
        }
        var lockState: LockState = .neverUnlocked
        var groupDigests: [String: Data] = [:]
    }

    /// How many access groups' digests are remembered: callers have a handful each, so this bounds the
    /// memory a stream of made-up group names could take, not the working set.
    private static let groupDigestLimit = 512

    private let state = Mutex(State())

    /// The keys available now. Operations take one snapshot and use it throughout.
    func snapshot() -> Snapshot {
        state.withLock {
            Snapshot(classKeys: $0.classKeys, indexKey: $0.indexKey, lockState: $0.lockState, groupDigests: $0.groupDigests)
        }
    }

    /// The digest of an access group under `snapshot`'s index key: from the snapshot when known, else
    /// computed and remembered (if the vault still holds that key). The digests are the `agrp` column's
    /// values, stored in the file in the clear, so remembering them exposes nothing the file does not;
    /// every search needs its caller's, and each is a keyed BLAKE2b.
    func groupDigest(_ group: String, in snapshot: Snapshot, key: SecureBytes) -> Data {
        if let known = snapshot.groupDigests[group] { return known }
        let digest = ItemDigests.group(group, key: key)
        state.withLock { state in
            if state.indexKey === key, state.groupDigests.count < Self.groupDigestLimit {
                state.groupDigests[group] = digest
            }
        }
        return digest
    }

    var lockState: LockState { state.withLock { $0.lockState } }

    /// Installs the keys unwrapped with the device key (`dk`, `dku`, index).
    func installDeviceTier(_ material: KeyMaterial) {
        state.withLock { state in
            for accessibility in KeyMaterial.deviceTier where state.classKeys[accessibility] == nil {
                state.classKeys[accessibility] = material.classKeys[accessibility]
            }
            if state.indexKey == nil { state.indexKey = material.indexKey }
        }
    }

    /// Installs every key (after an unlock with the passphrase).
    func installAll(_ material: KeyMaterial) {
        state.withLock { state in
            state.classKeys = material.classKeys
            state.indexKey = material.indexKey
            state.lockState = .unlocked
        }
    }

    /// Drops the keys of the classes available only while unlocked.
    func lock() {
        state.withLock { state in
            for accessibility in Accessibility.allCases where accessibility.availability == .whenUnlocked {
                state.classKeys[accessibility] = nil
            }
            if state.lockState == .unlocked { state.lockState = .locked }
        }
    }

    /// Drops every key (when the keychain is closed or deleted).
    func wipeAll() {
        state.withLock { state in
            state.classKeys = [:]
            state.indexKey = nil
            state.lockState = .neverUnlocked
        }
    }
}
