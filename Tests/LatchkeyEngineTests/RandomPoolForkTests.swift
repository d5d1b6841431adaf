import Foundation
import LatchkeyTestSupport
import Testing

/// The random pool behind nonces, item ids and item keys: a forked child inherits a copy of the pool's
/// memory, and must refill instead of handing out the bytes its parent hands out next.
@Suite(.dedicatedThreads) struct RandomPoolForkTests {
    @Test func aForkedChildNeverRepeatsItsParentsRandomBytes() throws {
        for _ in 0..<5 {
            let output = try HelperProcess.run(["fork-random"])
            #expect(output.status == 0, "\(output.stderr)")
            let lines = output.stdout.split(separator: "\n").map(String.init)
            try #require(lines.count == 2)
            #expect(lines[0].hasPrefix("child ") && lines[0].count == 6 + 64)
            #expect(lines[1].hasPrefix("parent ") && lines[1].count == 7 + 64)
            let child = lines[0].dropFirst(6)
            let parent = lines[1].dropFirst(7)
            #expect(child != parent)
            let zeros = String(repeating: "0", count: 64)
            #expect(child != zeros[...] && parent != zeros[...], "a wiped pool handed out as random bytes")
        }
    }
}
