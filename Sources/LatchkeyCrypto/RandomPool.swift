import LatchkeyPOSIX
import Synchronization

/// Buffers of random bytes from the operating system's CSPRNG, handed out in small pieces (nonces, item
/// ids, item keys) and wiped as they are handed out, so a batch of thousands of items costs a few
/// `getrandom` calls instead of five per item. Bytes are never handed out twice.
///
/// There are several pools, picked by the calling thread, so the threads that seal a batch in parallel do
/// not queue on one lock. Each pool is a page of its own, marked `MADV_WIPEONFORK` (a forked child finds it
/// zeroed, including the mark that says it is filled, and refills before use) and `MADV_DONTDUMP`. Where
/// the kernel refuses `MADV_WIPEONFORK`, the pool compares the process id on every request instead.
final class RandomPool: Sendable {
    /// Requests above this go straight to the system.
    static let largestRequest = 64
    /// One page: the random bytes, then the eight-byte "filled" mark.
    private static let pageSize = 4096
    private static let capacity = pageSize - 8
    private static let filledMark: UInt64 = 0x6C6B_706F_6F6C_2121

    /// Sixteen pools; a thread uses the one its thread id hashes to. Two threads that share one only wait
    /// for each other.
    private static let pools: [RandomPool] = (0..<16).map { _ in RandomPool() }

    /// Fills `buffer` (at most `largestRequest` bytes) from the calling thread's pool.
    static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        let thread = CurrentThread.id
        pools[Int(truncatingIfNeeded: (thread &* 0x9E37_79B9_7F4A_7C15) >> 60)].fill(buffer)
    }

    private struct State: ~Copyable {
        /// The page's address (kept as a number, which is `Sendable`), or nil where mapping it failed (then
        /// every request goes to the system).
        var page: UInt?
        var wipesOnFork = false
        var next = RandomPool.capacity
        var owner: Int32 = 0
    }

    private let state: Mutex<State>

    private init() {
        var initial = State()
        if let mapped = Memory.mapPages(Self.pageSize) {
            initial.page = UInt(bitPattern: mapped)
            initial.wipesOnFork = Memory.wipeOnFork(mapped, size: Self.pageSize)
            // Keeping random bytes out of core dumps is best effort: a kernel that refuses still wipes them.
            _ = Memory.excludeFromCoreDumps(mapped, size: Self.pageSize)
        }
        state = Mutex(initial)
    }

    private func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count <= Self.largestRequest)
        state.withLock { state in
            guard let address = state.page, let page = UnsafeMutableRawPointer(bitPattern: address) else {
                return Sodium.systemRandom(buffer)
            }
            let mark = page.advanced(by: Self.capacity)
            var stale = mark.load(as: UInt64.self) != Self.filledMark
            if !state.wipesOnFork {
                let me = CurrentProcess.id
                stale = stale || state.owner != me
                state.owner = me
            }
            if stale || state.next + buffer.count > Self.capacity {
                Sodium.systemRandom(UnsafeMutableRawBufferPointer(start: page, count: Self.capacity))
                mark.storeBytes(of: Self.filledMark, as: UInt64.self)
                state.next = 0
            }
            let slice = page.advanced(by: state.next)
            buffer.baseAddress?.copyMemory(from: slice, byteCount: buffer.count)
            Sodium.wipe(slice, count: buffer.count)
            state.next += buffer.count
        }
    }
}
