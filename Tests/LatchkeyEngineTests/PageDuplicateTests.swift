import Foundation
import Testing

@testable import LatchkeyEngine

/// Which rows of a pulled page name an item no other row of the page names (those take the fast path of
/// a new item): equal ids are found however the page orders them, and ids that share their first eight
/// bytes (the prefix the sort uses) are still told apart.
@Suite struct PageDuplicateTests {
    static func id(_ prefix: UInt8, _ last: UInt8) -> Data { Data(repeating: prefix, count: 15) + Data([last]) }

    @Test func equalIDsAreFoundWhereverTheyAre() {
        let a = Self.id(1, 1)
        let b = Self.id(2, 2)
        let c = Self.id(3, 3)
        let d = Self.id(4, 4)
        #expect(KeychainSync.appearingOnce([a, b, a, c, c, d]) == [false, true, false, false, false, true])
        #expect(KeychainSync.appearingOnce([d, c, b, a]) == [true, true, true, true])
        #expect(KeychainSync.appearingOnce([c, c, c]) == [false, false, false])
        #expect(KeychainSync.appearingOnce([b]) == [true])
        #expect(KeychainSync.appearingOnce([]) == [])
    }

    @Test func idsWithOnePrefixAreToldApart() {
        // The same first eight bytes (and 15), different last byte: the sort key ties, the ids do not.
        let ids = [Self.id(7, 3), Self.id(7, 1), Self.id(7, 3), Self.id(7, 2), Self.id(7, 1)]
        #expect(KeychainSync.appearingOnce(ids) == [false, false, false, true, false])
        // Shorter than the prefix: compared whole too.
        #expect(KeychainSync.appearingOnce([Data([9]), Data([9, 0]), Data([9])]) == [false, true, false])
    }
}
