/// How often a pooled device asks the server whether anything changed after its cursor: every `fast`
/// for `fastFor` after a change it saw (its own, or one it pulled — changes come in bursts: a person
/// edits several items, a script rotates a batch), then `idle`; each interval jittered by ±`jitter` so
/// that devices started together do not poll together. A change waits on average half an interval
/// before the other devices of its vault see it; each poll costs the server one primary-key lookup.
package struct SyncPollCadence: Sendable {
    /// The interval after a change.
    package var fast: Duration
    /// The interval when nothing changed for `fastFor`.
    package var idle: Duration
    /// How long the fast interval lasts after a change.
    package var fastFor: Duration
    /// The share of the interval each poll moves by at random, either way (0.2: ±20 %).
    package var jitter: Double
    private var lastChange: ContinuousClock.Instant?

    /// The agent's cadence: 1 s for 30 s after a change, 3.5 s when idle, ±10 %. The idle interval sets both
    /// of issue 36's figures at once — a change waits at most the interval and its jitter, and each idle device
    /// costs the server one poll per interval (about 140 µs of PostgreSQL's CPU each, docs/BENCHMARKS.md) — so
    /// it is chosen with room under both goals at 10,000 devices: p99 under 5 s (3.85 s at most, plus the
    /// pull) and under half a core (about 0.4). ±10 % still spreads devices started together within a few
    /// polls. Environment `LATCHKEY_SYNC_POLL=FAST,IDLE` (seconds, e.g. `0.5,10`) sets the two intervals.
    package init(
        fast: Duration = .seconds(1), idle: Duration = .milliseconds(3_500), fastFor: Duration = .seconds(30),
        jitter: Double = 0.1
    ) {
        self.fast = fast
        self.idle = idle
        self.fastFor = fastFor
        self.jitter = jitter
    }

    /// The cadence `LATCHKEY_SYNC_POLL` names (`FAST,IDLE` in seconds), or the default; nil when it is set
    /// but malformed.
    package static func fromEnvironment(_ value: String?) -> SyncPollCadence? {
        guard let value else { return SyncPollCadence() }
        let parts = value.split(separator: ",").compactMap { Double($0) }
        guard parts.count == 2, parts.allSatisfy({ $0 > 0 && $0 <= 3_600 }), parts[0] <= parts[1] else { return nil }
        return SyncPollCadence(
            fast: .milliseconds(Int64(parts[0] * 1_000)), idle: .milliseconds(Int64(parts[1] * 1_000)))
    }

    /// Remembers a change seen at `instant` (the fast interval starts again).
    package mutating func noteChange(at instant: ContinuousClock.Instant) { lastChange = instant }

    /// The wait before the next poll, at `instant`.
    package func interval(at instant: ContinuousClock.Instant, using generator: inout some RandomNumberGenerator)
        -> Duration
    {
        let base = lastChange.map { instant - $0 < fastFor } == true ? fast : idle
        let factor = 1 + Double.random(in: -jitter...jitter, using: &generator)
        return base * factor
    }
}
