import Foundation
import Testing

@testable import LatchkeyEngine

/// `ByteOrder.precedes` and `ItemDigests.orderKey` on raw bytes: the same order as `Data`'s own comparison
/// (SQLite's BLOB order), for slices that do not start at 0 and for digests shorter than eight bytes.
@Suite struct ByteOrderTests {
    @Test func precedesIsDataOrder() {
        var generator = SystemRandomNumberGenerator()
        let samples: [Data] =
            [
                Data(), Data([0]), Data([0, 0]), Data([1]), Data([0xFF]), Data([1, 2, 3]), Data([1, 2]),
                Data([1, 2, 4]),
            ]
            + (0..<40).map { _ in
                Data((0..<Int.random(in: 0...17, using: &generator)).map { _ in UInt8.random(in: 0...3) })
            }
        for a in samples {
            for b in samples {
                #expect(ByteOrder.precedes(a, b) == a.lexicographicallyPrecedes(b), "\(Array(a)) \(Array(b))")
            }
        }
        let slice = Data([9, 1, 2, 3]).dropFirst()
        #expect(ByteOrder.precedes(slice, Data([1, 2, 4])))
        #expect(!ByteOrder.precedes(slice, Data([1, 2, 3])))
        #expect(ByteOrder.precedes(Data([1, 2]), slice))
    }

    @Test func orderKeyIsTheFirstEightBytesBigEndian() {
        #expect(ItemDigests.orderKey(Data([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])) == 0x0102_0304_0506_0708)
        #expect(ItemDigests.orderKey(Data([1, 2])) == 0x0102_0000_0000_0000)
        #expect(ItemDigests.orderKey(Data()) == 0)
        #expect(ItemDigests.orderKey(Data([0xAA, 1, 2, 3, 4, 5, 6, 7, 8]).dropFirst()) == 0x0102_0304_0506_0708)
    }
}
