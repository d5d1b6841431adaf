import Glibc

/// A mutual-exclusion lock around code that touches state which is not `Sendable` (a SQLite connection): what
/// Foundation's `NSLock` is, on a `pthread_mutex_t` of its own, without linking swift-corelibs-foundation.
/// `Synchronization.Mutex` owns the value it protects, so it cannot hand a connection out to a caller's closure;
/// this lock only orders the callers. Not recursive.
package final class ThreadLock: @unchecked Sendable {
    // @unchecked: the mutex is the synchronization itself; its storage is allocated once and never moves.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// A new, unlocked lock.
    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        // A default mutex cannot fail to initialize (glibc).
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the lock held, released however `body` ends.
    package func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
