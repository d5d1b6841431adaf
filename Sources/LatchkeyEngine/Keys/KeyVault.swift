import Synchronization
internal import LatchkeyCrypto

/// The keys a keychain holds in memory, and the lock state. Locking drops the `ak`-family class keys; the
/// `SecureBytes` that held them wipe themselves when the last operation using them finishes.
final class KeyVault: Sendable {
    struct Snapshot: Sendable {
        let classKeys: [Accessibility: SecureBytes]
        let indexKey: SecureBytes?
        let lockState: LockState

        func classKey(for accessibility: Accessibility) -> SecureBytes? { classKeys[accessibility] }
    }

    private struct State: Sendable {
        var classKeys: [Accessibility: SecureBytes] = [:]
        var indexKey: SecureBytes?
        var lockState: LockState = .neverUnlocked
    }

    private let state = Mutex(State())

    /// The keys available now. Operations take one snapshot and use it throughout.
    func snapshot() -> Snapshot {
        state.withLock { Snapshot(classKeys: $0.classKeys, indexKey: $0.indexKey, lockState: $0.lockState) }
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
