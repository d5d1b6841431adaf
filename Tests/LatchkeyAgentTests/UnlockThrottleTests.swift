import Foundation
import Latchkey
import LatchkeyEngine
import LatchkeyTestSupport
import Synchronization
import Testing

@testable import LatchkeyAgent

/// The second review's point 8 (issue 30): 30 wrong passphrases through the agent in 0.6 s. After three in a
/// row, every attempt waits — 5 s, 10, 20, … up to 10 minutes — refused untried until then, counted across
/// agent restarts, cleared by the right passphrase.
@Suite(.serialized, .dedicatedThreads) struct UnlockThrottleTests {
    final class Clock: Sendable {
        let milliseconds = Mutex<Int64>(1_800_000_000_000)
        func advance(_ by: Int64) { milliseconds.withLock { $0 += by } }
        var now: Int64 { milliseconds.withLock { $0 } }
    }

    static let wrong = KeychainError(.authFailed)

    @Test func theWaitGrowsAfterThreeWrongPassphrasesAndTheRightOneClearsIt() throws {
        #expect(
            (0...8).map(UnlockThrottle.delay(afterFailures:)) == [
                0, 0, 0, 5_000, 10_000, 20_000, 40_000, 80_000, 160_000,
            ])
        #expect(UnlockThrottle.delay(afterFailures: 40) == 600_000)
        let directory = TemporaryDirectory()
        let clock = Clock()
        let logged = Mutex<[String]>([])
        func throttle() -> UnlockThrottle {
            UnlockThrottle(
                keychainPath: directory.file("k.keychain"), log: { line in logged.withLock { $0.append(line) } },
                now: { clock.now })
        }
        var tried = 0
        func fail(_ throttle: UnlockThrottle) -> KeychainError? {
            do throws(KeychainError) {
                try throttle.attempt("an unlock") { () throws(KeychainError) in
                    tried += 1
                    throw Self.wrong
                }
                return nil
            } catch {
                return error
            }
        }
        let first = throttle()
        for _ in 0..<3 { #expect(fail(first) == Self.wrong) }
        #expect(tried == 3)
        // Not tried for 5 s; the refusal is the same status with what to do.
        clock.advance(4_000)
        #expect(fail(first)?.detail == "not tried: 3 wrong passphrases in a row; try again in 1 s")
        #expect(tried == 3)
        // A new agent (a restart) knows the count.
        #expect(
            try String(contentsOfFile: directory.file("k.keychain.unlock-failures"), encoding: .utf8)
                == "3 1800000000000\n")
        let second = throttle()
        #expect(fail(second)?.detail == "not tried: 3 wrong passphrases in a row; try again in 1 s")
        clock.advance(1_000)
        #expect(fail(second) == Self.wrong)
        #expect(tried == 4)
        #expect(fail(second)?.detail == "not tried: 4 wrong passphrases in a row; try again in 10 s")
        clock.advance(10_000)
        // The right passphrase is tried and clears the count (and the file).
        try second.attempt("an unlock") { () throws(KeychainError) in tried += 1 }
        #expect(!FileManager.default.fileExists(atPath: directory.file("k.keychain.unlock-failures")))
        #expect(fail(second) == Self.wrong)
        #expect(
            logged.withLock { $0 }.contains(
                "a wrong passphrase for an unlock (3 in a row); the next attempt is allowed in 5 s"))
        #expect(
            logged.withLock { $0 }.contains(
                "refused an unlock without trying it: 3 wrong passphrases in a row; the next attempt is allowed in 1 s")
        )
    }

    /// Through the agent's own protocol, as the review guessed (the command line checks a passphrase itself
    /// before it hands it over): the fourth guess in a row is not tried, nor after a restart.
    @Test func guessesThroughTheAgentAreSlowedDown() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        func guess() throws -> KeychainError? {
            let client = try #require(
                try AgentClient.connect(keychainPath: sandbox.keychainPath, environment: sandbox.environment))
            do throws(KeychainError) {
                try AgentKeychainService(client: client).unlock(with: Passphrase("wrong guess"))
                return nil
            } catch {
                return error
            }
        }
        for _ in 0..<3 { #expect(try guess() == Self.wrong) }
        let throttled = try #require(try guess())
        #expect(throttled.status == .authFailed)
        #expect(
            throttled.detail?.wholeMatch(of: #/not tried: 3 wrong passphrases in a row; try again in [1-5] s/#) != nil,
            "\(throttled)")
        sandbox.stop()
        try sandbox.start()
        let afterRestart = try #require(try guess())
        #expect(
            afterRestart.detail?.hasPrefix("not tried: 3 wrong passphrases in a row; try again in ") == true,
            "\(afterRestart)")
        #expect(
            sandbox.agentLog.contains(
                "a wrong passphrase for an unlock (3 in a row); the next attempt is allowed in 5 s"))
        #expect(sandbox.agentLog.contains("refused an unlock without trying it: 3 wrong passphrases in a row"))
    }
}
