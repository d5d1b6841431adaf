#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A 4 KiB buffer of random bytes from the operating system's CSPRNG, handed out in small pieces (nonces,
/// item ids, item keys) and wiped as it is handed out, so a batch of thousands of items costs a few
/// `getrandom` calls instead of five per item. Bytes are never handed out twice; a forked child (which
/// would inherit a copy of the buffer) refills before using it.
final class RandomPool: Sendable {
    static let shared = RandomPool()
    /// Requests above this go straight to the system.
    static let largestRequest = 64
    private static let capacity = 4096

    private struct State: ~Copyable {
        var bytes = [UInt8](repeating: 0, count: RandomPool.capacity)
        var next = RandomPool.capacity
        var owner: pid_t = 0
    }

    private let state = Mutex(State())

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count <= Self.largestRequest)
        state.withLock { state in
            let me = getpid()
            if state.owner != me || state.next + buffer.count > Self.capacity {
                state.bytes.withUnsafeMutableBytes { Sodium.systemRandom($0) }
                state.next = 0
                state.owner = me
            }
            let start = state.next
            state.bytes.withUnsafeMutableBytes { pool in
                let slice = UnsafeMutableRawBufferPointer(rebasing: pool[start..<(start + buffer.count)])
                buffer.copyMemory(from: UnsafeRawBufferPointer(slice))
                Sodium.wipe(slice.baseAddress!, count: slice.count)
            }
            state.next += buffer.count
        }
    }
}
