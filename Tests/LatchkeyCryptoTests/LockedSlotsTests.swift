import Foundation
import LatchkeyPOSIX
import LatchkeyTestSupport
import Testing

@testable import LatchkeyCrypto

/// Small long-lived `SecureBytes` (keys) live in slots of shared locked pages: each its own slot, wiped when
/// given back, never handed out twice at once.
@Suite(.dedicatedThreads) struct LockedSlotsTests {
    func address(_ bytes: SecureBytes) -> UInt {
        bytes.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
    }

    @Test func aSlotGivenBackIsWipedAndTakenAgain() throws {
        let slots = LockedSlots()  // A pool of its own: the shared one is used by tests running alongside.
        let first = try #require(slots.take())
        first.copyMemory(
            from: Array(repeating: 0xA5 as UInt8, count: LockedSlots.slotSize), byteCount: LockedSlots.slotSize)
        let pageSlots = CurrentProcess.pageSize / LockedSlots.slotSize
        #expect(slots.freeCount == pageSlots - 1)
        slots.give(first)
        #expect(slots.freeCount == pageSlots)
        let again = try #require(slots.take())
        #expect(again == first)
        #expect(UnsafeRawBufferPointer(start: again, count: LockedSlots.slotSize).allSatisfy { $0 == 0 })
    }

    @Test func slotsOfOnePageDoNotOverlapAndANewPageComesWhenTheyRunOut() throws {
        let slots = LockedSlots()
        let pageSlots = CurrentProcess.pageSize / LockedSlots.slotSize
        var taken: [UnsafeMutableRawPointer] = []
        for _ in 0..<(pageSlots + 1) { taken.append(try #require(slots.take())) }
        let addresses = taken.map { UInt(bitPattern: $0) }.sorted()
        #expect(Set(addresses).count == pageSlots + 1)
        for (lower, upper) in zip(addresses, addresses.dropFirst()) {
            #expect(upper - lower >= UInt(LockedSlots.slotSize))
        }
        #expect(slots.freeCount == pageSlots - 1)  // The second page's other slots.
        for slot in taken { slots.give(slot) }
        #expect(slots.freeCount == 2 * pageSlots)
    }

    @Test func keysAreSlotsAndLargerBuffersPagesOfTheirOwn() {
        let key = SecureBytes(randomCount: 32)
        let largest = SecureBytes(randomCount: LockedSlots.slotSize)
        let passphrase = SecureBytes(copying: Array(repeating: 7 as UInt8, count: LockedSlots.slotSize + 1))
        let transient = SecureBytes(randomCount: 32, lifetime: .transient)
        #expect(key.isLockedInMemory && largest.isLockedInMemory && passphrase.isLockedInMemory)
        #expect(!transient.isLockedInMemory)
        #expect(address(passphrase) % UInt(CurrentProcess.pageSize) == 0)
        #expect(address(key) % UInt(LockedSlots.slotSize) == 0 && address(largest) % UInt(LockedSlots.slotSize) == 0)
        #expect(address(key) != address(largest))
        #expect(passphrase.withUnsafeBytes { $0.allSatisfy { $0 == 7 } })
    }

    @Test func keysMadeAndDroppedOnManyThreadsKeepTheirOwnBytes() async {
        let failures = await withTaskGroup(of: Int.self) { group in
            for thread in 0..<8 {
                group.addTask {
                    var failures = 0
                    var alive: [(SecureBytes, UInt8)] = []
                    for round in 0..<400 {
                        let fill = UInt8(truncatingIfNeeded: thread * 31 + round)
                        alive.append((SecureBytes(copying: Array(repeating: fill, count: 32)), fill))
                        if alive.count > 16 { alive.removeFirst(8) }
                        for (bytes, expected) in alive
                        where !bytes.withUnsafeBytes({ $0.allSatisfy { $0 == expected } }) {
                            failures += 1
                        }
                    }
                    return failures
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
    }
}
