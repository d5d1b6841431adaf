internal import Dispatch
internal import LatchkeyEngine
internal import Synchronization

/// Work started on another thread now and collected later, once: the pull fetches, opens and seals the next
/// page with it while the calling thread writes the current one (a pipeline one page deep, so two cores
/// share a sync).
final class Ahead<Value: Sendable>: Sendable {
    private let result = Mutex<Result<Value, KeychainError>?>(nil)
    private let done = DispatchSemaphore(value: 0)

    /// Starts `work` on a global queue.
    init(_ work: @escaping @Sendable () throws(KeychainError) -> Value) {
        DispatchQueue.global().async { [self] in
            let outcome = Result { () throws(KeychainError) -> Value in try work() }
            result.withLock { $0 = outcome }
            done.signal()
        }
    }

    /// Waits for the work and returns what it returned or threw. Call once (or `wait()` once).
    func value() throws(KeychainError) -> Value {
        done.wait()
        let outcome = result.withLock { $0 }
        guard let outcome else { throw KeychainError(.internal, "a page fetched ahead has no result") }
        return try outcome.get()
    }

    /// Waits for the work and drops its result: before leaving on an error, so that nothing still uses the
    /// connection the work was given.
    func wait() { done.wait() }
}
