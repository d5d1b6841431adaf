import LatchkeyPOSIX

/// A buffer for key material and passphrases: locked against swapping where the system allows it,
/// wiped when released, compared in constant time, and never printed.
///
/// The bytes are written once, by the initializer, and only read afterwards.
package final class SecureBytes: @unchecked Sendable {
    // @unchecked: the buffer is written only inside `init` and read-only until `deinit` wipes it.
    private let base: UnsafeMutableRawPointer
    /// The number of bytes held.
    package let count: Int
    /// The bytes allocated: a slot or whole pages for locked buffers (see `init`), else `max(count, 1)`.
    private let capacity: Int
    private let isLocked: Bool
    /// Whether the bytes are a slot of `LockedSlots` (given back, not freed).
    private let isSlot: Bool

    /// The memory page size, the unit `mlock` works in.
    private static let pageSize = CurrentProcess.pageSize

    /// How long key material is expected to live, which decides whether its pages are locked.
    package enum Lifetime: Sendable {
        /// Held for a long time (class keys, the master key, passphrases): locked against swapping.
        case longLived
        /// Held for microseconds (one item's key during one operation): wiped on release but not
        /// `mlock`ed — two system calls per item would cost more than the whole lookup, and the pages
        /// are reused long before the kernel could swap them out.
        case transient
    }

    /// Creates a buffer of `count` bytes and lets `initializer` fill it. If the initializer throws, the
    /// partly written buffer is wiped before the error propagates.
    package init<E: Error>(
        count: Int, lifetime: Lifetime = .longLived, initializer: (UnsafeMutableRawBufferPointer) throws(E) -> Void
    ) throws(E) {
        precondition(count >= 0)
        // A small locked buffer is a slot of the shared locked pages. A larger one gets pages of its own:
        // `mlock` locks whole pages and `munlock` is not counted, so a buffer that shared a page with another
        // would unlock that one's key when it is released. One byte at least, so the pointer is always valid.
        let lock = lifetime == .longLived && count > 0
        let slot = lock && count <= LockedSlots.slotSize ? LockedSlots.shared.take() : nil
        let capacity: Int
        let allocation: UnsafeMutableRawPointer
        let locked: Bool
        if let slot {
            (allocation, capacity, locked) = (slot, LockedSlots.slotSize, true)
        } else {
            capacity = lock ? (count + Self.pageSize - 1) / Self.pageSize * Self.pageSize : max(count, 1)
            allocation = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: lock ? Self.pageSize : 16)
            allocation.initializeMemory(as: UInt8.self, repeating: 0, count: capacity)
            locked = lock && Sodium.lockMemory(allocation, count: capacity)
        }
        do {
            try initializer(UnsafeMutableRawBufferPointer(start: allocation, count: count))
        } catch {
            Self.release(allocation, capacity: capacity, locked: locked, slot: slot != nil)
            throw error
        }
        self.base = allocation
        self.count = count
        self.capacity = capacity
        self.isLocked = locked
        self.isSlot = slot != nil
    }

    /// Wipes a buffer and gives it back: a slot to its pool, else unlocked (when it was) and freed.
    private static func release(_ allocation: UnsafeMutableRawPointer, capacity: Int, locked: Bool, slot: Bool) {
        if slot {
            LockedSlots.shared.give(allocation)
            return
        }
        Sodium.wipe(allocation, count: capacity)
        if locked { Sodium.unlockMemory(allocation, count: capacity) }
        allocation.deallocate()
    }

    /// Creates a buffer of `count` random bytes from the operating system's CSPRNG.
    package convenience init(randomCount count: Int, lifetime: Lifetime = .longLived) {
        self.init(count: count, lifetime: lifetime) { Sodium.fillRandom($0) }
    }

    /// Copies `bytes` into a new secure buffer. The caller remains responsible for wiping its own copy.
    package convenience init(copying bytes: UnsafeRawBufferPointer) {
        self.init(count: bytes.count) { buffer in
            if bytes.count > 0 { buffer.copyMemory(from: bytes) }
        }
    }

    /// Copies the contents of a byte array; the array itself is not wiped (Swift may hold copies).
    package convenience init(copying bytes: [UInt8]) {
        self.init(count: bytes.count) { buffer in
            bytes.withUnsafeBytes { if $0.count > 0 { buffer.copyMemory(from: $0) } }
        }
    }

    deinit { Self.release(base, capacity: capacity, locked: isLocked, slot: isSlot) }

    /// Gives read access to the bytes for the duration of `body`; the pointer must not escape.
    package func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Compares two buffers in constant time with respect to their contents.
    package func constantTimeEquals(_ other: SecureBytes) -> Bool {
        withUnsafeBytes { a in other.withUnsafeBytes { b in Sodium.constantTimeEqual(a, b) } }
    }

    /// Whether the pages are locked against swapping (false when the system's limit was reached).
    package var isLockedInMemory: Bool { isLocked }
}

extension SecureBytes: CustomStringConvertible, CustomDebugStringConvertible {
    /// Never shows the contents.
    package var description: String { "SecureBytes(\(count) bytes, redacted)" }
    /// Never shows the contents.
    package var debugDescription: String { description }
}

/// Overwrites the bytes of a `[UInt8]` or `Data`-like mutable buffer with zeros, for plaintext copies that
/// are not `SecureBytes` (encoded attributes, decrypted secrets handed back to the caller's copy).
package func wipeBytes(_ buffer: UnsafeMutableRawBufferPointer) {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    Sodium.wipe(base, count: buffer.count)
}
