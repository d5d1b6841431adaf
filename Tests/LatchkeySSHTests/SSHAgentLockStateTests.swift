import Foundation
import LatchkeyCrypto
import LatchkeySSH
import Synchronization
import Testing

/// The SSH agent's own lock (`ssh-add -x` / `-X`): a passphrase kept only as a keyed digest, a failed unlock
/// answered after a delay that grows, each lock counted.
@Suite struct SSHAgentLockStateTests {
    static func secret(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }

    @Test func locksOnceAndUnlocksWithTheSamePassphrase() {
        let locks = Atomic(0)
        let lock = SSHAgentLock { locks.add(1, ordering: .relaxed) }
        #expect(!lock.isLocked)
        #expect(lock.epoch == 0)
        #expect(lock.lock(Self.secret("pass")))
        #expect(lock.isLocked)
        #expect(lock.epoch == 1)
        #expect(!lock.lock(Self.secret("other")))  // Locked already: a second lock changes nothing.
        #expect(lock.epoch == 1)
        #expect(lock.unlock(Self.secret("pass")))
        #expect(!lock.isLocked)
        #expect(lock.lock(Self.secret("pass")))
        #expect(lock.epoch == 2)
        #expect(locks.load(ordering: .relaxed) == 2)
    }

    @Test func anEmptyPassphraseNeitherLocksNorUnlocks() {
        let lock = SSHAgentLock()
        #expect(!lock.lock(Self.secret("")))
        #expect(!lock.isLocked)
        #expect(lock.lock(Self.secret("p")))
        #expect(!lock.unlock(Self.secret("")))
        #expect(lock.isLocked)
    }

    @Test func unlockingWhatIsNotLockedFails() {
        let lock = SSHAgentLock()
        #expect(!lock.unlock(Self.secret("p")))
        #expect(!lock.isLocked)
    }

    @Test func aWrongPassphraseWaitsLongerEachTime() {
        let lock = SSHAgentLock()
        #expect(lock.lock(Self.secret("right")))
        let clock = ContinuousClock()
        var start = clock.now
        #expect(!lock.unlock(Self.secret("wrong")))
        #expect(clock.now - start >= .milliseconds(100))
        start = clock.now
        #expect(!lock.unlock(Self.secret("wrong")))
        #expect(clock.now - start >= .milliseconds(200))
        #expect(lock.isLocked)
        // The right one still unlocks after failures.
        #expect(lock.unlock(Self.secret("right")))
        #expect(!lock.isLocked)
    }
}
