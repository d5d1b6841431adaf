import Foundation
import LatchkeySync
import LatchkeyTestSupport
import Testing

/// A pooled device's polling: fast for a while after a change, then idle; always within the jitter.
@Suite("A pooled device's poll cadence")
struct SyncPollCadenceTests {
    @Test func fastAfterAChangeThenIdleEachWithinItsJitter() {
        var random = TestSeed.generator("pollCadence")
        var cadence = SyncPollCadence(fast: .seconds(1), idle: .seconds(3), fastFor: .seconds(30), jitter: 0.2)
        let start = ContinuousClock.now
        for _ in 0..<200 {
            let interval = cadence.interval(at: start, using: &random)
            #expect(interval >= .milliseconds(2_400) && interval <= .milliseconds(3_600), "idle: \(interval)")
        }
        cadence.noteChange(at: start)
        for _ in 0..<200 {
            let interval = cadence.interval(at: start + .seconds(29), using: &random)
            #expect(interval >= .milliseconds(800) && interval <= .milliseconds(1_200), "fast: \(interval)")
        }
        #expect(cadence.interval(at: start + .seconds(30), using: &random) >= .milliseconds(2_400))
        let intervals = Set((0..<50).map { _ in cadence.interval(at: start, using: &random) })
        #expect(intervals.count > 40, "the jitter spreads the polls")
    }

    @Test func theEnvironmentSetsBothIntervalsOrIsRefused() {
        let set = SyncPollCadence.fromEnvironment("0.5,10")
        #expect(set?.fast == .milliseconds(500))
        #expect(set?.idle == .seconds(10))
        #expect(SyncPollCadence.fromEnvironment(nil)?.idle == .milliseconds(3_500))
        #expect(SyncPollCadence.fromEnvironment(nil)?.fast == .seconds(1))
        #expect(SyncPollCadence.fromEnvironment(nil)?.jitter == 0.1)
        #expect(SyncPollCadence.fromEnvironment("10,1") == nil)
        #expect(SyncPollCadence.fromEnvironment("1") == nil)
        #expect(SyncPollCadence.fromEnvironment("0,1") == nil)
    }
}
