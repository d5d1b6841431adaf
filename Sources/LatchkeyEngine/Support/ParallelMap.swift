import Dispatch
import FoundationEssentials

/// Maps a collection on every core (for batch work that does not touch the database), keeping the order
/// and stopping at the first error. Package API: the sync layer opens pulled rows with it.
///
/// Each result is built in its place in the returned array: no slot per element to copy it out of. The
/// results of a batch are large values (sealed rows, opened records: a dozen buffers each), and copying one
/// retains and releases every buffer, which cost a batch add more than its sealing (docs/DESIGN-NOTES.md,
/// "Batch work without copies"). Inlinable, so a caller in another module gets it specialized for its types
/// rather than moving them through their value witnesses.
package enum ParallelMap {
    /// Below this many elements the work stays on the calling thread.
    @usableFromInline static let minimumForParallelism = 64

    /// `transform` of each element, in order, run in chunks on every core (on the calling thread alone for
    /// fewer than `minimumForParallelism`); the first error, in element order, is thrown, and no result is
    /// left behind.
    @inlinable
    package static func map<Element: Sendable, Result: Sendable>(
        _ elements: [Element], _ transform: @Sendable (Element) throws(KeychainError) -> Result
    ) throws(KeychainError) -> [Result] {
        let count = elements.count
        if count < minimumForParallelism {
            var results: [Result] = []
            results.reserveCapacity(count)
            for element in elements { results.append(try transform(element)) }
            return results
        }
        let chunks = min(count, ProcessInfo.processInfo.activeProcessorCount * 4)
        // Per chunk: how many of its results are built (a prefix of its range) and the error it stopped at.
        var built = [Int](repeating: 0, count: chunks)
        var failures = [KeychainError?](repeating: nil, count: chunks)
        let results = [Result](unsafeUninitializedCapacity: count) { output, initializedCount in
            built.withUnsafeMutableBufferPointer { built in
                failures.withUnsafeMutableBufferPointer { failures in
                    // Each chunk writes only its own results and its own entries of `built` and `failures`.
                    nonisolated(unsafe) let output = output.baseAddress!
                    nonisolated(unsafe) let built = built.baseAddress!
                    nonisolated(unsafe) let failures = failures.baseAddress!
                    DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                        let range = (count * chunk / chunks)..<(count * (chunk + 1) / chunks)
                        for index in range {
                            do throws(KeychainError) {
                                (output + index).initialize(to: try transform(elements[index]))
                            } catch {
                                failures[chunk] = error
                                built[chunk] = index - range.lowerBound
                                return
                            }
                        }
                        built[chunk] = range.count
                    }
                }
            }
            guard failures.contains(where: { $0 != nil }) else {
                initializedCount = count
                return
            }
            // A chunk failed: the results the others built are destroyed, and the array is empty.
            for chunk in 0..<chunks {
                (output.baseAddress! + count * chunk / chunks).deinitialize(count: built[chunk])
            }
            initializedCount = 0
        }
        // The chunks before the first failing one finished, so its error is the first in element order.
        if let failure = failures.lazy.compactMap({ $0 }).first { throw failure }
        return results
    }
}
