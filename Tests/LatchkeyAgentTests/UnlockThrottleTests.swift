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

/// The third review's point 6 (issue 50): any peer could run up the throttle and keep the owner from
/// unlocking. Guesses now count against whose they are: every program that is not one of the owner's tools
/// shares one count, the owner's `latchkey` and each registered program have their own, the agent's dialog
/// its own, and root's hand-over of the login password is never refused.
@Suite(.serialized, .dedicatedThreads) struct UnlockThrottleBucketTests {
    typealias Clock = UnlockThrottleTests.Clock

    @Test func eachBucketCountsItsOwnGuessesAndTheLoginIsNeverRefused() throws {
        let directory = TemporaryDirectory()
        let clock = Clock()
        func throttle() -> UnlockThrottle {
            UnlockThrottle(keychainPath: directory.file("k.keychain"), log: { _ in }, now: { clock.now })
        }
        func attempt(_ throttle: UnlockThrottle, _ bucket: UnlockThrottle.Bucket, right: Bool) -> KeychainError? {
            do throws(KeychainError) {
                try throttle.attempt("an unlock", as: bucket) { () throws(KeychainError) in
                    if !right { throw UnlockThrottleTests.wrong }
                }
                return nil
            } catch {
                return error
            }
        }
        let first = throttle()
        for _ in 0..<3 { #expect(attempt(first, .others, right: false) == UnlockThrottleTests.wrong) }
        #expect(attempt(first, .others, right: true)?.detail?.hasPrefix("not tried: 3 wrong passphrases") == true)
        // The owner's tool, the dialog and the login are not held back by the others' guesses.
        #expect(attempt(first, .tool("/usr/bin/latchkey"), right: true) == nil)
        #expect(attempt(first, .dialog, right: true) == nil)
        for _ in 0..<5 { #expect(attempt(first, .login, right: false) == UnlockThrottleTests.wrong) }
        #expect(attempt(first, .login, right: true) == nil)
        // The tool's own wrong guesses hold the tool back, and are remembered by bucket across a restart.
        for _ in 0..<3 {
            #expect(attempt(first, .tool("/usr/bin/latchkey"), right: false) == UnlockThrottleTests.wrong)
        }
        #expect(
            try String(contentsOfFile: directory.file("k.keychain.unlock-failures"), encoding: .utf8)
                == "3 1800000000000\n3 1800000000000 tool /usr/bin/latchkey\n")
        let second = throttle()
        #expect(
            attempt(second, .tool("/usr/bin/latchkey"), right: true)?.detail
                == "not tried: 3 wrong passphrases in a row; try again in 5 s")
        #expect(
            attempt(second, .others, right: true)?.detail == "not tried: 3 wrong passphrases in a row; try again in 5 s"
        )
        #expect(attempt(second, .dialog, right: true) == nil)
    }

    /// The attack as the review ran it: an unregistered program guesses through the agent's socket until the
    /// throttle refuses; the owner's `latchkey unlock-keychain` with the right passphrase still unlocks.
    @Test func anotherProgramsGuessesDoNotLockTheOwnerOut() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        // The operation code of `unlock` (LatchkeyProtocol's `AgentOperation`), with a wrong passphrase.
        let guesses = (0..<4).map { "3:wrong guess \($0)" }
        let asked = try HelperProcess.run(
            "/usr/bin/python3", [AgentHardeningTests.tools + "/agent-ask.py", sandbox.socketPath] + guesses,
            environment: sandbox.environment)
        // errSecAuthFailed four times: three tried, the fourth refused untried.
        #expect(asked.stdout == "3 -25293\n3 -25293\n3 -25293\n3 -25293\n", "\(asked.stderr)")
        #expect(sandbox.agentLog.contains("refused an unlock without trying it: 3 wrong passphrases in a row"))
        let unlocked = try sandbox.cli("unlock-keychain")
        #expect(unlocked.status == 0, "\(unlocked.stderr)\n\(sandbox.agentLog)")
        #expect(try sandbox.cli("show-keychain-info").status == 0)
        #expect(sandbox.agentLog.contains("unlocked"))
    }
}
