/// A buffer for key material and passphrases: locked against swapping where the system allows it,
/// wiped when released, compared in constant time, and never printed.
///
/// The bytes are written once, by the initializer, and only read afterwards.
package final class SecureBytes: @unchecked Sendable {
    // @unchecked: the buffer is written only inside `init` and read-only until `deinit` wipes it.
    private let base: UnsafeMutableRawPointer
    /// The number of bytes held.
    package let count: Int
    private let isLocked: Bool

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
        // One byte at least, so the pointer is always valid.
        let allocation = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
        allocation.initializeMemory(as: UInt8.self, repeating: 0, count: max(count, 1))
        let locked = lifetime == .longLived && count > 0 && Sodium.lockMemory(allocation, count: count)
        do {
            try initializer(UnsafeMutableRawBufferPointer(start: allocation, count: count))
        } catch {
            Sodium.wipe(allocation, count: max(count, 1))
            if locked { Sodium.unlockMemory(allocation, count: count) }
            allocation.deallocate()
            throw error
        }
        self.base = allocation
        self.count = count
        self.isLocked = locked
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

    deinit {
        Sodium.wipe(base, count: max(count, 1))
        if isLocked { Sodium.unlockMemory(base, count: count) }
        base.deallocate()
    }

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
