import Foundation

/// Seeds for the randomized tests: every one prints the seed it uses, and `LATCHKEY_TEST_SEED` replays a run.
public enum TestSeed {
    /// The environment variable that fixes the seed of every randomized test.
    public static let variable = "LATCHKEY_TEST_SEED"

    /// `LATCHKEY_TEST_SEED` when set, else a fresh random seed; printed either way, naming `test`.
    public static func make(_ test: String) -> UInt64 {
        let given = ProcessInfo.processInfo.environment[variable].flatMap { UInt64($0) }
        let seed = given ?? UInt64.random(in: 1...UInt64.max)
        print("\(test): seed \(seed)\(given == nil ? " (replay with \(variable)=\(seed))" : " (from \(variable))")")
        return seed
    }

    /// A generator seeded by `make(test)`.
    public static func generator(_ test: String) -> SplitMix64 { SplitMix64(seed: make(test)) }
}

/// A small, seedable generator, so a failing run can be replayed from its printed seed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
