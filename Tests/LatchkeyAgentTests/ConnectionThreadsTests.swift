import Foundation
import LatchkeyPOSIX
import LatchkeyTestSupport
import Synchronization
import Testing

@testable import LatchkeyAgent

/// `ConnectionThreads`: a connection's thread waits for the next connection instead of exiting, lets go of
/// the work (and so the connection it holds) as soon as the work returns, and never makes a connection wait
/// for another: when none is idle, a new thread starts.
@Suite(.serialized) struct ConnectionThreadsTests {
    final class Flag: Sendable {
        let value = Atomic(false)
    }

    final class Connection: Sendable {
        let closed: Flag
        init(_ closed: Flag) { self.closed = closed }
        deinit { closed.value.store(true, ordering: .releasing) }
    }

    @Test func aThreadServesTheNextConnectionOnceItsOwnCloses() throws {
        let threads = ConnectionThreads()
        let ids = Mutex<[UInt64]>([])
        let done = DispatchSemaphore(value: 0)
        threads.run {
            ids.withLock { $0.append(CurrentThread.id) }
            done.signal()
        }
        done.wait()
        try waitUntil("the thread waiting") { threads.idleCount == 1 }
        threads.run {
            ids.withLock { $0.append(CurrentThread.id) }
            done.signal()
        }
        done.wait()
        let seen = ids.withLock { $0 }
        #expect(seen.count == 2 && seen[0] == seen[1])
    }

    @Test func theWorkIsReleasedWhenItReturns() throws {
        let threads = ConnectionThreads()
        let closed = Flag()
        let connection = Connection(closed)
        let ran = DispatchSemaphore(value: 0)
        threads.run { [connection] in
            _ = connection
            ran.signal()
        }
        _ = consume connection
        ran.wait()
        // The thread now waits for another connection; the one it served is gone already.
        try waitUntil("the connection released") { closed.value.load(ordering: .acquiring) }
    }

    @Test func busyThreadsNeverMakeAConnectionWait() throws {
        let threads = ConnectionThreads()
        let count = ConnectionThreads.idleLimit * 3
        let started = Atomic(0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        for _ in 0..<count {
            threads.run {
                started.add(1, ordering: .relaxed)
                release.wait()
                finished.signal()
            }
        }
        // Every connection has a thread at once, none waiting for another to finish.
        try waitUntil("every connection served") { started.load(ordering: .relaxed) == count }
        for _ in 0..<count { release.signal() }
        for _ in 0..<count { finished.wait() }
        // Of the threads that served them, at most the limit stay to wait.
        try waitUntil("the idle threads settled") { threads.idleCount == ConnectionThreads.idleLimit }
    }
}
