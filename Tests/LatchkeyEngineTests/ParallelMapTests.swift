import Foundation
import Synchronization
import Testing

@testable import LatchkeyEngine

/// `ParallelMap`: results in element order on every core, the first error in element order, and — since each
/// result is built in its place in the array — every result built destroyed exactly once, also when a chunk
/// fails and the array is dropped.
@Suite struct ParallelMapTests {
    /// A result that counts how many of its kind are alive.
    final class Counted: Sendable {
        static let alive = Atomic<Int>(0)
        let value: Int
        init(_ value: Int) {
            self.value = value
            Self.alive.add(1, ordering: .relaxed)
        }
        deinit { Self.alive.subtract(1, ordering: .relaxed) }
    }

    @Test(arguments: [0, 1, 63, 64, 65, 1_000, 10_007])
    func resultsKeepTheElementsOrder(count: Int) throws {
        let results = try ParallelMap.map(Array(0..<count)) { (value) throws(KeychainError) in "item \(value)" }
        #expect(results == (0..<count).map { "item \($0)" })
    }

    @Test(arguments: [10, 1_000])
    func theFirstErrorInElementOrderIsThrown(count: Int) {
        let failing: Set<Int> = [count * 7 / 10, count * 3 / 10, count - 1]
        #expect(throws: KeychainError.param("element \(count * 3 / 10)")) {
            _ = try ParallelMap.map(Array(0..<count)) { (value) throws(KeychainError) -> Int in
                if failing.contains(value) { throw KeychainError.param("element \(value)") }
                return value
            }
        }
    }

    /// Serialized: the count of live results is shared by the cases.
    @Test(.serialized, arguments: [10, 64, 1_000, 5_001])
    func everyResultBuiltIsDestroyedOnce(count: Int) throws {
        #expect(Counted.alive.load(ordering: .relaxed) == 0)
        do {
            let results = try ParallelMap.map(Array(0..<count)) { (value) throws(KeychainError) in Counted(value) }
            #expect(results.map(\.value) == Array(0..<count))
            #expect(Counted.alive.load(ordering: .relaxed) == count)
        }
        #expect(Counted.alive.load(ordering: .relaxed) == 0)
        // Chunks fail at their start, middle and end: whatever the others built is destroyed.
        for failure in [0, count / 2, count - 1] {
            #expect(throws: KeychainError.self) {
                _ = try ParallelMap.map(Array(0..<count)) { (value) throws(KeychainError) -> Counted in
                    if value == failure { throw KeychainError.param("element \(value)") }
                    return Counted(value)
                }
            }
            #expect(Counted.alive.load(ordering: .relaxed) == 0)
        }
    }
}
