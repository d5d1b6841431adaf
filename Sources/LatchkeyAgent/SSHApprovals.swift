import FoundationEssentials
import LatchkeyEngine
import LatchkeyPOSIX
import Synchronization

/// The process tree an approval covers: the client's process group (a shell job: `git push`, an Ansible run,
/// and every process under it) in its session, pinned by the group leader's start time, so a later group
/// that reuses the number is another tree. A process can join a group only in its own session.
struct ProcessTree: Hashable, Sendable {
    let group: Int32
    let session: Int32
    let leaderStarted: UInt64

    /// The tree of the process `handle` pins; nil when its group's leader is gone or cannot be read (its uses
    /// are then asked one by one).
    static func of(_ handle: ProcessHandle?) -> ProcessTree? {
        guard let handle, let (group, session) = handle.groupAndSession, group > 0,
            let started = Processes.startTime(of: group)
        else { return nil }
        return ProcessTree(group: group, session: session, leaderStarted: started)
    }

    /// Whether the tree's leader is still the process that led it.
    var isAlive: Bool { Processes.startTime(of: group) == leaderStarted }
}

/// Approvals of SSH key uses the user gave (`ssh-add -c` keys): one covers the same key, the same process tree
/// and the same destination (`SSHKeyUse.scope`) for the key's approval time — and ends at once when the
/// keychain or the SSH agent locks (their lock counts are part of it), so after a lock every use asks again.
final class SSHApprovals: Sendable {
    private struct Grant: Hashable {
        let keyLabel: Data
        let tree: ProcessTree
        let scope: String
    }
    private struct Validity {
        let until: ContinuousClock.Instant
        let keychainEpoch: Int
        let agentEpoch: Int
    }
    private let grants = Mutex<[Grant: Validity]>([:])
    /// The most approvals kept: the oldest goes first.
    static let limit = 1_024

    /// Whether an approval covers this use now, with the keychain and agent lock counts `epochs`.
    func covers(keyLabel: Data, tree: ProcessTree?, scope: String, epochs: (keychain: Int, agent: Int)) -> Bool {
        guard let tree else { return false }
        let grant = Grant(keyLabel: keyLabel, tree: tree, scope: scope)
        let now = ContinuousClock.now
        let valid = grants.withLock { grants -> Bool in
            guard let validity = grants[grant] else { return false }
            guard validity.until > now, validity.keychainEpoch == epochs.keychain, validity.agentEpoch == epochs.agent
            else {
                grants[grant] = nil
                return false
            }
            return true
        }
        return valid && tree.isAlive
    }

    /// Records an approval for `seconds`.
    func grant(keyLabel: Data, tree: ProcessTree?, scope: String, seconds: Int, epochs: (keychain: Int, agent: Int)) {
        guard let tree, seconds > 0 else { return }
        let now = ContinuousClock.now
        grants.withLock { grants in
            grants = grants.filter {
                $0.value.until > now && $0.value.keychainEpoch == epochs.keychain && $0.value.agentEpoch == epochs.agent
            }
            if grants.count >= Self.limit, let oldest = grants.min(by: { $0.value.until < $1.value.until }) {
                grants[oldest.key] = nil
            }
            grants[Grant(keyLabel: keyLabel, tree: tree, scope: scope)] = Validity(
                until: now + .seconds(seconds), keychainEpoch: epochs.keychain, agentEpoch: epochs.agent)
        }
    }

    /// Forgets every approval (at a lock).
    func clear() { grants.withLock { $0.removeAll() } }

    /// How many approvals are held (for tests and the log).
    var count: Int { grants.withLock { $0.count } }
}
