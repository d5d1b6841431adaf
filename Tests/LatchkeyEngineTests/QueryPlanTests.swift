import Foundation
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

@testable import Latchkey
@testable import LatchkeyEngine

/// Lookups go through indexes: SQLite's plan for every query shape searches an index and never scans the
/// items table, so the cost of a lookup does not grow with the number of items.
@Suite(.dedicatedThreads) struct QueryPlanTests {
    let directory = TemporaryDirectory()

    /// The plan of `query`'s SELECT; `groupIndexLast` recreates the items table's indexes with `items_by_group`
    /// after the primary-key index (the schema's own order is the other way round): of two indexes that look
    /// equally good, which one SQLite takes follows that order.
    func plan(_ query: ItemQuery, caller: CallerIdentity = Fixture.app, groupIndexLast: Bool = false) throws -> String {
        let keychain = try Fixture.newKeychain(in: directory)
        let validated = try RequestValidation.validate(query, caller: caller)
        let selection = try keychain.selection(for: validated)
        let (sql, arguments) = selection.statement(includeData: true)
        if groupIndexLast {
            // SQLite weighs the two indexes alike only once the table has pages of rows to read.
            try keychain.addAll(
                (0..<1000).map {
                    NewItem(
                        .genericPassword, attributes: [.service: .string("s\($0 / 10)"), .account: .string("a\($0)")],
                        data: Data())
                }, caller: caller)
            let writer = try Connection(path: directory.file("test.keychain"), mode: .readWrite)
            try writer.execute(
                """
                DROP INDEX items_by_group; DROP INDEX items_by_primary_key; DROP INDEX items_tombstones; DROP INDEX items_by_id;
                CREATE UNIQUE INDEX items_by_primary_key ON items (pk, agrp, sync) WHERE tomb = 0;
                CREATE INDEX items_tombstones ON items (pk, agrp, sync) WHERE tomb = 1;
                CREATE INDEX items_by_group ON items (agrp, class);
                CREATE INDEX items_by_id ON items (id);
                """)
        }
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

    /// kSecAttrSynchronizableAny leaves `sync` out of the SELECT; the lookup still takes the primary-key index,
    /// whichever index was created last (before `+agrp`, a caller of one access group, on a keychain whose
    /// group index came last, read every item of its group for each lookup).
    @Test(arguments: [SynchronizableFilter.no, .yes, .any], [false, true])
    func aWholePrimaryKeySearchesTheUniqueIndexWhateverTheSchemaOrder(
        _ synchronizable: SynchronizableFilter, groupIndexLast: Bool
    ) throws {
        let query = ItemQuery(
            .genericPassword, matching: [.service: .string("mail"), .account: .string("alice")],
            synchronizable: synchronizable)
        // One access group, as most programs have: with two, the group index's IN list already looked worse.
        let text = try plan(
            query, caller: CallerIdentity(applicationIdentifier: "com.example.app"), groupIndexLast: groupIndexLast)
        #expect(text == "SEARCH items USING INDEX items_by_primary_key (pk=?)", "\(text)")
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
        let text = try plan(
            ItemQuery(.genericPassword, matching: [.service: .string("mail")], persistentReference: reference))
        #expect(text.contains("SEARCH items USING INTEGER PRIMARY KEY (rowid=?)"), "\(text)")
        #expect(text.contains("SEARCH item_index USING PRIMARY KEY (digest=? AND item=?)"), "\(text)")
        #expect(!text.contains("LIST SUBQUERY"), "not every item of the service: \(text)")
    }

    @Test func aReferenceAndAnAttributeMustBothMatch() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let added = try #require(
            try keychain.add(
                NewItem(
                    .genericPassword, attributes: [.service: .string("mail"), .account: .string("a")],
                    data: Data("x".utf8)), caller: Fixture.app, returning: .persistentReference))
        for other in 0..<20 {
            try keychain.add(
                NewItem(
                    .genericPassword, attributes: [.service: .string("mail"), .account: .string("o\(other)")],
                    data: Data()),
                caller: Fixture.app)
        }
        let found = try keychain.copyMatching(
            ItemQuery(
                .genericPassword, matching: [.service: .string("mail")],
                persistentReference: added.persistentReference, returning: .data), caller: Fixture.app)
        #expect(found.map(\.data) == [Data("x".utf8)])
        #expect(
            status {
                _ = try keychain.copyMatching(
                    ItemQuery(
                        .genericPassword, matching: [.service: .string("news")],
                        persistentReference: added.persistentReference), caller: Fixture.app)
            } == .itemNotFound)
        #expect(
            status {
                _ = try keychain.copyMatching(
                    ItemQuery(
                        .genericPassword, matching: [.service: .string("mail"), .account: .string("o3")],
                        persistentReference: added.persistentReference), caller: Fixture.app)
            } == .itemNotFound)
    }

    /// Of several filters, the narrowest lists its items and the others are checked on those rows: a label
    /// beside a service lists the label's items, not every item of the service.
    @Test func aBroadFilterIsCheckedOnTheRowsANarrowOneLists() throws {
        let own = TemporaryDirectory()  // `plan` makes the suite directory's keychain.
        let keychain = try Fixture.newKeychain(in: own)
        let query = ItemQuery(
            .genericPassword, matching: [.service: .string("mail"), .label: .string("x")], limit: .all)
        let selection = try keychain.selection(for: try RequestValidation.validate(query, caller: Fixture.app))
        let label = ItemDigests.index(
            itemClass: .genericPassword, attribute: .label, value: .string("x"), key: selection.indexKey)
        let service = ItemDigests.index(
            itemClass: .genericPassword, attribute: .service, value: .string("mail"), key: selection.indexKey)
        #expect(selection.filterDigests == [label, service])
        // Broad first by name ("crtr" before "labl") still checks, not lists.
        let byCreator = ItemQuery(
            .genericPassword, matching: [.creator: .number(7), .label: .string("x")], limit: .all)
        let other = try keychain.selection(for: try RequestValidation.validate(byCreator, caller: Fixture.app))
        #expect(
            other.filterDigests == [
                label,
                ItemDigests.index(
                    itemClass: .genericPassword, attribute: .creator, value: .number(7), key: selection.indexKey),
            ])
        let (sql, arguments) = selection.statement(includeData: false)
        #expect(
            sql.components(separatedBy: "row_id IN (SELECT item FROM item_index WHERE digest = ?)").count == 2, "\(sql)"
        )
        #expect(
            sql.components(separatedBy: "EXISTS (SELECT 1 FROM item_index WHERE digest = ? AND item = items.row_id)")
                .count == 2, "\(sql)")
        #expect(Array(arguments.suffix(2)) == [.blob(label), .blob(service)])
        let text = try plan(query)
        #expect(text.components(separatedBy: "LIST SUBQUERY").count == 2, "one list: \(text)")
        #expect(text.contains("CORRELATED SCALAR SUBQUERY"), "\(text)")
        #expect(!text.contains("SCAN items"), "\(text)")
    }

    @Test func everyFilterMustStillMatch() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        for (service, account, label) in [
            ("mail", "a", "x"), ("mail", "b", "y"), ("news", "c", "x"), ("mail", "d", "x"),
        ] {
            try keychain.add(
                NewItem(
                    .genericPassword,
                    attributes: [.service: .string(service), .account: .string(account), .label: .string(label)],
                    data: Data(account.utf8)), caller: Fixture.app)
        }
        func accounts(_ matching: [AttributeKey: AttributeValue]) throws -> [String] {
            try keychain.copyMatching(
                ItemQuery(.genericPassword, matching: matching, limit: .all, returning: .attributes),
                caller: Fixture.app
            )
            .compactMap { $0.attributes[.account]?.stringValue }
        }
        #expect(try accounts([.service: .string("mail"), .label: .string("x")]) == ["a", "d"])
        #expect(try accounts([.service: .string("news"), .label: .string("x")]) == ["c"])
        #expect(status { _ = try accounts([.service: .string("news"), .label: .string("y")]) } == .itemNotFound)
        #expect(status { _ = try accounts([.service: .string("other"), .label: .string("x")]) } == .itemNotFound)
        #expect(try accounts([.service: .string("mail"), .label: .string("x"), .account: .string("d")]) == ["d"])
    }

    @Test func aClassListingUsesTheGroupIndex() throws {
        let text = try plan(ItemQuery(.genericPassword, limit: .all))
        #expect(text.contains("SEARCH items USING INDEX items_by_group"), "\(text)")
    }
}
