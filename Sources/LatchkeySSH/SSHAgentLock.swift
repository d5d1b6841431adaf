import FoundationEssentials
package import LatchkeyCrypto
import LatchkeyPOSIX
import Synchronization

/// The SSH agent's own lock (`ssh-add -x` / `-X`, `SSH_AGENTC_LOCK` / `UNLOCK`): while it is locked the agent
/// lists no key and signs nothing, whatever the keychain's state. The passphrase is kept only as a keyed
/// digest under a random key made at the lock; a wrong one at unlock is answered after a delay, 0.1 s longer
/// at each failure up to 10 s (as `ssh-agent` does).
///
/// Lock and unlock attempts are taken one at a time across every connection, and a failure's delay is slept
/// before the next attempt is looked at — as in `ssh-agent`, whose one thread sleeps — so guesses on many
/// connections at once come no faster than on one. Only attempts wait: whether the agent is locked is read
/// at once, so other requests are answered meanwhile (while locked: no key).
package final class SSHAgentLock: Sendable {
    private struct State: ~Copyable {
        var digestKey: SecureBytes?
        var digest: SecureBytes?
        var failures = 0
        var epoch = 0
    }
    private let state = Mutex(State())
    /// Held for a whole lock or unlock attempt, its failure delay included: one attempt at a time.
    private let attempts = Mutex(())
    /// Called after every lock (approvals end there).
    private let onLock: @Sendable () -> Void

    package init(onLock: @escaping @Sendable () -> Void = {}) { self.onLock = onLock }

    /// Whether the agent is locked.
    package var isLocked: Bool { state.withLock { $0.digest != nil } }

    /// Counts locks: what was allowed before one no longer is.
    package var epoch: Int { state.withLock { $0.epoch } }

    /// Locks with `passphrase`; false when already locked or the passphrase is empty. Waits for an attempt
    /// under way (and its delay) to end first.
    package func lock(_ passphrase: SecureBytes) -> Bool {
        guard passphrase.count > 0 else { return false }
        return attempts.withLock { _ in lockNow(passphrase) }
    }

    private func lockNow(_ passphrase: SecureBytes) -> Bool {
        let locked = state.withLock { state -> Bool in
            guard state.digest == nil else { return false }
            let key = SecureBytes(randomCount: KeyedDigest.keyLength)
            state.digestKey = key
            state.digest = KeyedDigest.secureDigest(of: passphrase, key: key)
            state.epoch += 1
            return true
        }
        if locked { onLock() }
        return locked
    }

    /// Unlocks when `passphrase` is the lock's; false otherwise, after the delay for failed attempts. Waits
    /// for the attempts before it (and their delays) to end first.
    package func unlock(_ passphrase: SecureBytes) -> Bool {
        attempts.withLock { _ in unlockNow(passphrase) }
    }

    private func unlockNow(_ passphrase: SecureBytes) -> Bool {
        let outcome = state.withLock { state -> (Bool, Int) in
            guard let key = state.digestKey, let digest = state.digest, passphrase.count > 0 else { return (false, 0) }
            if KeyedDigest.secureDigest(of: passphrase, key: key).constantTimeEquals(digest) {
                state = State(digestKey: nil, digest: nil, failures: 0, epoch: state.epoch)
                return (true, 0)
            }
            state.failures = min(state.failures + 1, 100)
            return (false, state.failures)
        }
        if !outcome.0 && outcome.1 > 0 { CurrentThread.sleep(for: .milliseconds(100) * outcome.1) }
        return outcome.0
    }
}
