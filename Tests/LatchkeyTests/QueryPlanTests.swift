import Foundation
@testable import Latchkey
@testable import LatchkeyEngine
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

/// Lookups go through indexes: SQLite's plan for every query shape searches an index and never scans the
/// items table, so the cost of a lookup does not grow with the number of items.
@Suite(.dedicatedThreads) struct QueryPlanTests {
    let directory = TemporaryDirectory()

    func plan(_ query: ItemQuery, caller: CallerIdentity = Fixture.app) throws -> String {
        let keychain = try Fixture.newKeychain(in: directory)
        let validated = try RequestValidation.validate(query, caller: caller)
        let selection = try keychain.selection(for: validated)
        let (sql, arguments) = selection.statement(includeData: true)
        let db = try Connection(path: directory.file("test.keychain"), mode: .readWrite)
        var steps: [String] = []
        try db.forEachRow("EXPLAIN QUERY PLAN " + sql, arguments) { steps.append($0.text(3) ?? "") }
        return steps.joined(separator: "\n")
    }

    @Test func aWholePrimaryKeySearchesTheUniqueIndex() throws {
        let text = try plan(Fixture.query(service: "mail", account: "alice"))
        #expect(text.contains("SEARCH items USING INDEX items_by_primary_key"), "\(text)")
        #expect(!text.contains("SCAN items"), "\(text)")
    }

    @Test func aPartialKeySearchesTheAttributeIndex() throws {
        let text = try plan(Fixture.query(service: "mail"))
        #expect(text.contains("SEARCH item_index USING PRIMARY KEY (digest=?)"), "\(text)")
        #expect(!text.contains("SCAN items"), "\(text)")
    }

    @Test func aPersistentReferenceGoesStraightToItsRow() throws {
        let reference = Data("lkp1genp".utf8) + Data([0, 0, 0, 0, 0, 0, 0, 7]) + Data(count: 16)
        let text = try plan(ItemQuery(.genericPassword, persistentReference: reference))
        #expect(text.contains("SEARCH items USING INTEGER PRIMARY KEY (rowid=?)"), "\(text)")
    }

    @Test func aReferenceWithAttributesLooksUpOnlyItsOwnIndexEntries() throws {
        let reference = Data("lkp1genp".utf8) + Data([0, 0, 0, 0, 0, 0, 0, 7]) + Data(count: 16)
        let text = try plan(ItemQuery(.genericPassword, matching: [.service: .string("mail")], persistentReference: reference))
        #expect(text.contains("SEARCH items USING INTEGER PRIMARY KEY (rowid=?)"), "\(text)")
        #expect(text.contains("SEARCH item_index USING PRIMARY KEY (digest=? AND item=?)"), "\(text)")
        #expect(!text.contains("LIST SUBQUERY"), "not every item of the service: \(text)")
    }

    @Test func aReferenceAndAnAttributeMustBothMatch() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let added = try #require(try keychain.add(NewItem(.genericPassword, attributes: [.service: .string("mail"), .account: .string("a")],
                                                          data: Data("x".utf8)), caller: Fixture.app, returning: .persistentReference))
        for other in 0..<20 {
            try keychain.add(NewItem(.genericPassword, attributes: [.service: .string("mail"), .account: .string("o\(other)")], data: Data()),
                             caller: Fixture.app)
        }
        let found = try keychain.copyMatching(ItemQuery(.genericPassword, matching: [.service: .string("mail")],
                                                        persistentReference: added.persistentReference, returning: .data), caller: Fixture.app)
        #expect(found.map(\.data) == [Data("x".utf8)])
        #expect(status {
            _ = try keychain.copyMatching(ItemQuery(.genericPassword, matching: [.service: .string("news")],
                                                    persistentReference: added.persistentReference), caller: Fixture.app)
        } == .itemNotFound)
        #expect(status {
            _ = try keychain.copyMatching(ItemQuery(.genericPassword, matching: [.service: .string("mail"), .account: .string("o3")],
                                                    persistentReference: added.persistentReference), caller: Fixture.app)
        } == .itemNotFound)
    }

    @Test func aClassListingUsesTheGroupIndex() throws {
        let text = try plan(ItemQuery(.genericPassword, limit: .all))
        #expect(text.contains("SEARCH items USING INDEX items_by_group"), "\(text)")
    }
}
