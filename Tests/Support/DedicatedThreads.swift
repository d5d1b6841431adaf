import Foundation
import Testing

/// Runs a suite's tests on a pool of threads of its own instead of Swift's cooperative pool.
///
/// The tests block: they wait for child processes, sockets, Argon2id. On the cooperative pool (one thread
/// per core — two here) two blocking tests would leave no thread for the async work a third test awaits
/// (a detached task, a timer), and a test could fail for want of a thread. Here a blocked test holds one
/// of these threads; the cooperative pool stays free; and the pool's width bounds how many tests run at
/// once, as the cooperative pool did.
public struct DedicatedThreadsTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(TestThreadPool.shared) { try await function() }
    }
}

extension Trait where Self == DedicatedThreadsTrait {
    /// Run on dedicated threads, never on the cooperative pool (see `DedicatedThreadsTrait`).
    public static var dedicatedThreads: Self { DedicatedThreadsTrait() }
}

/// A fixed set of threads that run task jobs in the order they arrive.
public final class TestThreadPool: TaskExecutor, @unchecked Sendable {
    // @unchecked: `jobs` is guarded by `condition`.
    public static let shared = TestThreadPool(width: max(3, ProcessInfo.processInfo.activeProcessorCount + 1))

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    init(width: Int) {
        for index in 0..<width {
            let thread = Thread { [self] in work() }
            thread.name = "test pool \(index)"
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        condition.lock()
        jobs.append(unowned)
        condition.signal()
        condition.unlock()
    }

    private func work() -> Never {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
