import Dispatch
import FoundationEssentials

/// Maps a collection on every core (for batch work that does not touch the database), keeping the order
/// and stopping at the first error. Package API: the sync layer opens pulled rows with it.
package enum ParallelMap {
    /// Below this many elements the work stays on the calling thread.
    static let minimumForParallelism = 64

    /// `transform` of each element, in order, run in chunks on every core (on the calling thread alone for
    /// fewer than `minimumForParallelism`); the first error, in element order, is thrown.
    package static func map<Element: Sendable, Result: Sendable>(
        _ elements: [Element], _ transform: @Sendable (Element) throws(KeychainError) -> Result
    ) throws(KeychainError) -> [Result] {
        if elements.count < minimumForParallelism {
            var results: [Result] = []
            results.reserveCapacity(elements.count)
            for element in elements { results.append(try transform(element)) }
            return results
        }
        var slots = [Swift.Result<Result, KeychainError>?](repeating: nil, count: elements.count)
        slots.withUnsafeMutableBufferPointer { buffer in
            // Each chunk writes only its own slots, so the threads never touch the same element.
            nonisolated(unsafe) let output = buffer.baseAddress!
            let chunks = min(elements.count, ProcessInfo.processInfo.activeProcessorCount * 4)
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                let range = (elements.count * chunk / chunks)..<(elements.count * (chunk + 1) / chunks)
                for index in range {
                    output[index] = Swift.Result { () throws(KeychainError) in try transform(elements[index]) }
                }
            }
        }
        var results: [Result] = []
        results.reserveCapacity(elements.count)
        for slot in slots { results.append(try slot!.get()) }
        return results
    }
}
