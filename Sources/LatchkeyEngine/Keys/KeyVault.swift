import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyPKI
import Synchronization

/// The keys a keychain holds in memory, and the lock state. Locking drops the `ak`-family class keys (the
/// `SecureBytes` that held them wipe themselves when the last operation using them finishes), the loaded
/// private keys of held keys, and the ephemeral held keys.
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
        /// Private keys the keychain holds, loaded (see `heldKey`); emptied by every lock.
        var heldKeys: [Data: LoadedHeldKey] = [:]
        /// Counts locks, so a key loaded before one is not remembered after it.
        var lockEpoch = 0
        /// Ephemeral held keys (never stored), by handle, oldest first; emptied by every lock.
        var ephemeralKeys: [EphemeralKey] = []

        /// Where the ephemeral key `handle` names is kept, if `owner` made it.
        func ephemeralKeyIndex(_ handle: Data, owner: String) -> Int? {
            ephemeralKeys.firstIndex { $0.handle == handle && $0.owner == owner }
        }
    }

    /// How many ephemeral held keys are kept: past this, the oldest goes (its handle then names nothing).
    static let ephemeralKeyLimit = 256

    /// What an ephemeral held key is kept as: a private key in memory, or — a Secure Enclave P-256 key made
    /// inside the TPM — its stored form (`HeldKeyData` format 3: the public point and the TPM's wrapped
    /// object, whose private area only that TPM can open), used as a stored TPM key's is.
    enum EphemeralForm: Sendable {
        case software(AsymmetricKey)
        case tpm(Data)
    }

    /// An ephemeral held key: its handle, the program it is for, and — when it was made for another process
    /// (through the agent) — whether that process has ended.
    struct EphemeralKey: Sendable {
        let handle: Data
        let owner: String
        let key: EphemeralForm
        let holderEnded: (@Sendable () -> Bool)?

        var isOrphaned: Bool { holderEnded?() == true }
    }

    /// A held key's private key as OpenSSL loaded it, with the keyed digest of the stored bytes it came from.
    private struct LoadedHeldKey: Sendable {
        let fingerprint: Data
        let key: AsymmetricKey
    }

    /// How many loaded held keys are remembered: a program uses a few; the bound caps what a caller naming
    /// many keys in turn could pin in memory.
    private static let heldKeyLimit = 64

    /// Keys the fingerprints of stored held keys (random, for this vault's life): the fingerprints say
    /// nothing of the keys and cannot be compared across processes.
    private let fingerprintKey = SecureBytes(randomCount: KeyedDigest.keyLength)

    /// How many access groups' digests are remembered: callers have a handful each, so this bounds the
    /// memory a stream of made-up group names could take, not the working set.
    private static let groupDigestLimit = 512

    private let state = Mutex(State())

    /// The keys available now. Operations take one snapshot and use it throughout.
    func snapshot() -> Snapshot {
        state.withLock {
            Snapshot(
                classKeys: $0.classKeys, indexKey: $0.indexKey, lockState: $0.lockState, groupDigests: $0.groupDigests)
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

    /// The lock state, and how many locks there have been (so "still unlocked since then" is one comparison).
    var lockStateAndEpoch: (state: LockState, epoch: Int) { state.withLock { ($0.lockState, $0.lockEpoch) } }

    /// The private key of the held key `reference` names, whose stored form is `stored` (just read, and so
    /// readable now by the caller): loaded by `load` the first time, then remembered until the keychain
    /// locks. Loading an RSA key costs more than using it (OpenSSL's Montgomery and blinding set-up, about
    /// 600 µs for RSA-2048, on its first use), so every use after the first saves that. A remembered key is
    /// used only for the exact bytes it came from; reading them goes through the item's access checks
    /// every time, as before.
    func heldKey(_ reference: Data, stored: Data, load: () throws(KeychainError) -> AsymmetricKey) throws(KeychainError)
        -> AsymmetricKey
    {
        let fingerprint = KeyedDigest.digest(stored, key: fingerprintKey)
        let (known, epoch) = state.withLock { ($0.heldKeys[reference], $0.lockEpoch) }
        if let known, known.fingerprint == fingerprint { return known.key }
        let key = try load()
        state.withLock { state in
            guard state.lockEpoch == epoch else { return }  // Locked while loading: not remembered.
            if state.heldKeys[reference] == nil, state.heldKeys.count >= Self.heldKeyLimit,
                let any = state.heldKeys.keys.first
            {
                state.heldKeys.removeValue(forKey: any)
            }
            state.heldKeys[reference] = LoadedHeldKey(fingerprint: fingerprint, key: key)
        }
        return key
    }

    /// Keeps an ephemeral held key for `owner` (an application identifier) and returns its handle: `"lke1"`
    /// and 28 random bytes, the length of a persistent reference, unguessable. `holderEnded` tells whether
    /// the process the key was made for has ended (nil: it was made for this process): as Apple's
    /// non-permanent keys go with the process that made them, such a key goes then — checked for every kept
    /// key whenever one is made, and for a key whenever it is asked for.
    func holdEphemeral(_ key: EphemeralForm, owner: String, holderEnded: (@Sendable () -> Bool)? = nil) -> Data {
        let handle = EphemeralKeyHandle.make()
        state.withLock { state in
            state.ephemeralKeys.removeAll { $0.isOrphaned }
            if state.ephemeralKeys.count >= Self.ephemeralKeyLimit { state.ephemeralKeys.removeFirst() }
            state.ephemeralKeys.append(EphemeralKey(handle: handle, owner: owner, key: key, holderEnded: holderEnded))
        }
        return handle
    }

    /// The ephemeral held key `handle` names, if `owner` made it and it is still kept (not when the process
    /// it was made for has ended: it goes now).
    func ephemeralKey(_ handle: Data, owner: String) -> EphemeralForm? {
        state.withLock { state in
            guard let index = state.ephemeralKeyIndex(handle, owner: owner) else { return nil }
            guard !state.ephemeralKeys[index].isOrphaned else {
                state.ephemeralKeys.remove(at: index)
                return nil
            }
            return state.ephemeralKeys[index].key
        }
    }

    /// Forgets the ephemeral held key `handle` names if `owner` made it; whether there was one.
    func releaseEphemeral(_ handle: Data, owner: String) -> Bool {
        state.withLock { state in
            guard let index = state.ephemeralKeyIndex(handle, owner: owner) else { return false }
            state.ephemeralKeys.remove(at: index)
            return true
        }
    }

    /// How many ephemeral held keys are kept now (for the tests).
    var ephemeralKeyCount: Int { state.withLock { $0.ephemeralKeys.count } }

    /// How many held keys are loaded now (for the tests of `heldKey`).
    var loadedHeldKeyCount: Int { state.withLock { $0.heldKeys.count } }

    /// Forgets every loaded held key (when keys are deleted or the items replaced), so none outlives its item.
    func forgetHeldKeys() {
        state.withLock { $0.heldKeys = [:] }
    }

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
            state.heldKeys = [:]
            state.ephemeralKeys = []
            state.lockEpoch += 1
        }
    }

    /// Drops every key (when the keychain is closed or deleted).
    func wipeAll() {
        state.withLock { state in
            state.classKeys = [:]
            state.indexKey = nil
            state.lockState = .neverUnlocked
            state.heldKeys = [:]
            state.ephemeralKeys = []
            state.lockEpoch += 1
        }
    }
}
