import LatchkeyPOSIX
import Synchronization

/// Locked memory for small long-lived buffers (keys): slots of `slotSize` bytes carved out of pages that are
/// locked against swapping (and kept out of core dumps) once, and kept for the process's life. A page of
/// its own per key cost four system calls to make and release it (`mlock`, two `madvise`, `munlock`; about
/// 10 µs on a virtual machine), which a keychain with a dozen keys paid a dozen times.
///
/// A slot is wiped when it is given back and is never handed out twice at once; pages are never unlocked,
/// so releasing one key never unlocks another's page. The pool grows to the most keys alive at once.
final class LockedSlots: Sendable {
    /// The pool every `SecureBytes` uses.
    static let shared = LockedSlots()
    /// The bytes of a slot: a key of up to 512 bits.
    static let slotSize = 64

    private let pageSize = CurrentProcess.pageSize
    /// Free slots, as addresses.
    private let free = Mutex<[UInt]>([])

    /// A zeroed slot in a locked page, or nil when the system will not lock more memory (the caller then
    /// makes a buffer of its own, unlocked).
    func take() -> UnsafeMutableRawPointer? {
        if let address = free.withLock({ $0.popLast() }) { return UnsafeMutableRawPointer(bitPattern: address) }
        let page = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: pageSize)
        page.initializeMemory(as: UInt8.self, repeating: 0, count: pageSize)
        guard Sodium.lockMemory(page, count: pageSize) else {
            page.deallocate()
            return nil
        }
        let slots = pageSize / Self.slotSize
        free.withLock { free in
            for index in 1..<slots { free.append(UInt(bitPattern: page + index * Self.slotSize)) }
        }
        return page
    }

    /// Wipes `slot` (from `take`) and makes it available again; its page stays locked.
    func give(_ slot: UnsafeMutableRawPointer) {
        Sodium.wipe(slot, count: Self.slotSize)
        free.withLock { $0.append(UInt(bitPattern: slot)) }
    }

    /// How many slots are free now (for tests).
    var freeCount: Int { free.withLock { $0.count } }
}
