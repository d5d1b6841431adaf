import Foundation
import LatchkeyTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Guessing the `ssh-add -x` passphrase is no faster on many connections than on one: unlock attempts are
/// taken one at a time across every connection, and a wrong one's delay (0.1 s longer at each failure, up to
/// 10 s, as `ssh-agent` delays) is waited out before the next attempt is looked at.
@Suite(.serialized, .dedicatedThreads) struct SSHAgentLockGuessingTests {
    /// The most wrong guesses the delay schedule lets end within `seconds` of the first: the n-th failure is
    /// answered no sooner than 0.1 s × (1 + 2 + … + n) after the first attempt began.
    static func bound(seconds: Double) -> Int {
        var guesses = 0
        var elapsed = 0.0
        while true {
            elapsed += 0.1 * Double(min(guesses + 1, 100))
            guard elapsed <= seconds else { return guesses }
            guesses += 1
        }
    }

    @Test func eightConnectionsGuessNoFasterThanTheDelaysAllowOne() throws {
        let ssh = try SSHSandbox()
        let locker = try SSHAgentWire(path: ssh.socketPath)
        #expect(locker.exchange([22] + SSHAgentWire.string("the right passphrase")) == [6])
        let window = 3.0
        let bound = Self.bound(seconds: window)
        #expect(bound == 7)
        let path = ssh.socketPath
        let answered = Mutex<[[UInt8]]>([])
        let deadline = ContinuousClock.now + .seconds(window)
        let done = DispatchGroup()
        for index in 0..<8 {
            done.enter()
            Thread {
                defer { done.leave() }
                guard let wire = try? SSHAgentWire(path: path) else {
                    answered.withLock { $0.append([]) }  // Not connected: fails the test below.
                    return
                }
                var attempt = 0
                while true {
                    // Wait no longer than the window for an answer: one that comes later is not counted.
                    let left = deadline - ContinuousClock.now
                    guard left > .zero else { return }
                    var timeout = timeval(
                        tv_sec: Int(left.components.seconds),
                        tv_usec: max(1, Int(left.components.attoseconds / 1_000_000_000_000)))
                    setsockopt(
                        wire.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                    attempt += 1
                    guard let reply = wire.exchange([23] + SSHAgentWire.string("guess \(index)-\(attempt)")),
                        ContinuousClock.now < deadline
                    else { return }
                    answered.withLock { $0.append(reply) }
                }
            }.start()
        }
        #expect(done.wait(timeout: .now() + window + 10) == .success)
        let replies = answered.withLock { $0 }
        #expect(replies.allSatisfy { $0 == [5] }, "\(replies)")
        // No more than one connection could have got through in the window (the old agent let each of the
        // eight wait out its own delay at once: about three times as many).
        #expect(
            replies.count <= bound, "\(replies.count) wrong guesses answered in \(window) s, at most \(bound) allowed")
        #expect(!ssh.agent.agentLog.contains("unlocked the SSH agent"))
        // The lock still opens with its passphrase, and every connection's guesses were taken (each one's first
        // at least, read while the agent was locked), however long the delays made them wait.
        #expect(locker.exchange([23] + SSHAgentWire.string("the right passphrase")) == [6])
        try waitUntil("every connection's first guess to be answered", seconds: 60) {
            ssh.agent.agentLog.components(separatedBy: "gave a wrong passphrase to unlock the SSH agent").count - 1 >= 8
        }
    }
}
