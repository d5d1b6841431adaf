import Dispatch
import LatchkeyPOSIX
import Synchronization

/// The threads connections are served on: a connection gets a thread of its own, as before, but a thread whose
/// connection closed waits a while for the next one instead of exiting. Starting a thread per connection cost
/// the client its creation, and its exit cost the agent a stack given back to the kernel (glibc releases a
/// cached stack's pages, and the next thread faults them in again, zeroed) — with one SSH connection per
/// signature, more than the signature (docs/DESIGN-NOTES.md, "Connection threads").
///
/// At most `idleLimit` threads wait, each for at most `idleSeconds`; a connection that finds none idle starts
/// a new one, so a busy agent is never limited by the pool (the connection limit stays the agent's own).
final class ConnectionThreads: Sendable {
    static let shared = ConnectionThreads()

    static let idleLimit = 8
    static let idleSeconds = 30

    /// One waiting thread: the work handed to it, and the signal that wakes it.
    private final class Waiter: Sendable {
        let wake = DispatchSemaphore(value: 0)
        let work = Mutex<(@Sendable () -> Void)?>(nil)
    }

    private let idle = Mutex<[Waiter]>([])

    /// Threads waiting for a connection now.
    var idleCount: Int { idle.withLock { $0.count } }

    /// Runs `work` on an idle thread, or a new one.
    func run(_ work: @escaping @Sendable () -> Void) {
        if let waiter = idle.withLock({ $0.popLast() }) {
            waiter.work.withLock { $0 = work }
            waiter.wake.signal()
            return
        }
        // The thread holds its waiter, never the work itself: a connection's work holds the connection, which
        // closes when the work is released — as soon as it returns, not when the thread ends.
        let waiter = Waiter()
        waiter.work.withLock { $0 = work }
        DetachedThread.start(name: "latchkeyd-conn", stackBytes: 1 << 20) { [self] in serve(waiter) }
    }

    /// A thread's life: the work its waiter holds, then each handed to it while it waits.
    private func serve(_ waiter: Waiter) {
        while Self.runHandedWork(waiter) {
            let waiting = idle.withLock { idle -> Bool in
                guard idle.count < Self.idleLimit else { return false }
                idle.append(waiter)
                return true
            }
            guard waiting else { return }
            if waiter.wake.wait(timeout: .now() + .seconds(Self.idleSeconds)) == .timedOut {
                // Leave the idle list — unless `run` took this waiter meanwhile: then its work is on the way.
                let left = idle.withLock { idle -> Bool in
                    guard let index = idle.firstIndex(where: { $0 === waiter }) else { return false }
                    idle.remove(at: index)
                    return true
                }
                if left { return }
                waiter.wake.wait()
            }
        }
    }

    /// Takes the waiter's work and runs it; false when there was none. The work is released when this returns.
    private static func runHandedWork(_ waiter: Waiter) -> Bool {
        let work = waiter.work.withLock { work in
            defer { work = nil }
            return work
        }
        guard let work else { return false }
        work()
        return true
    }
}
