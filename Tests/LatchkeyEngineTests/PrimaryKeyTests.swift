import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// SEMANTICS.md §1, table-driven: each class's primary key, its defaults, and attributes of other classes.
@Suite(.dedicatedThreads) struct PrimaryKeyTests {
    struct ClassCase: CustomTestStringConvertible, Sendable {
        let itemClass: ItemClass
        /// Each primary-key attribute with two distinct values.
        let key: [(AttributeKey, AttributeValue, AttributeValue)]
        /// An attribute this class does not have.
        let foreign: AttributeKey
        /// Two different secrets (for certificates, two different certificates: the data must be one).
        var secrets = (Data("1".utf8), Data("2".utf8))
        var testDescription: String { itemClass.rawValue }

        var base: [AttributeKey: AttributeValue] {
            Dictionary(uniqueKeysWithValues: key.map { ($0.0, $0.1) })
        }
    }

    static let date1 = Date(timeIntervalSince1970: 1_700_000_000)
    static let date2 = Date(timeIntervalSince1970: 1_800_000_000)

    static let cases: [ClassCase] = [
        ClassCase(
            itemClass: .genericPassword,
            key: [
                (.account, .string("alice"), .string("bob")),
                (.service, .string("mail"), .string("chat")),
            ], foreign: .server),
        ClassCase(
            itemClass: .internetPassword,
            key: [
                (.account, .string("alice"), .string("bob")),
                (.securityDomain, .string("corp"), .string("home")),
                (.server, .string("example.com"), .string("example.org")),
                (.protocol, .string("htps"), .string("http")),
                (.authenticationType, .string("dflt"), .string("form")),
                (.port, .number(443), .number(8443)),
                (.path, .string("/a"), .string("/b")),
            ], foreign: .service),
        ClassCase(
            itemClass: .certificate,
            key: [
                (.certificateType, .number(1), .number(2)),
                (.issuer, .data(Data("CN=CA 1".utf8)), .data(Data("CN=CA 2".utf8))),
                (.serialNumber, .data(Data([1, 2, 3])), .data(Data([1, 2, 4]))),
            ], foreign: .account,
            secrets: (try! CertificateFixtures.der("leaf-ec256.der"), try! CertificateFixtures.der("email-only.der"))),
        ClassCase(
            itemClass: .key,
            key: [
                (.keyClass, .number(1), .number(2)),
                (.applicationLabel, .data(Data([0xAA])), .data(Data([0xBB]))),
                (.applicationTag, .data(Data("tag1".utf8)), .data(Data("tag2".utf8))),
                (.creator, .number(1), .number(2)),
                (.type, .number(42), .number(73)),
                (.keySizeInBits, .number(2048), .number(4096)),
                (.effectiveKeySize, .number(2048), .number(4096)),
                (.startDate, .date(date1), .date(date2)),
                (.endDate, .date(date1), .date(date2)),
            ], foreign: .service),
    ]

    let directory = TemporaryDirectory()

    @Test(arguments: cases)
    func theSamePrimaryKeyIsADuplicateWhateverElseDiffers(_ c: ClassCase) throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(
            NewItem(
                c.itemClass, attributes: c.base.merging([.label: .string("one")]) { a, _ in a },
                data: c.secrets.0), caller: Fixture.app)
        #expect(
            status {
                try keychain.add(
                    NewItem(
                        c.itemClass, attributes: c.base.merging([.label: .string("two")]) { a, _ in a },
                        data: c.secrets.1), caller: Fixture.app)
            } == .duplicateItem)
    }

    @Test(arguments: cases)
    func changingAnyOnePrimaryKeyAttributeMakesADistinctItem(_ c: ClassCase) throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(NewItem(c.itemClass, attributes: c.base), caller: Fixture.app)
        for (name, _, other) in c.key {
            var attributes = c.base
            attributes[name] = other
            #expect(
                status { try keychain.add(NewItem(c.itemClass, attributes: attributes), caller: Fixture.app) } == nil,
                "changing \(name) should give a new item")
        }
        let all = try keychain.copyMatching(
            ItemQuery(c.itemClass, limit: .all, returning: .attributes), caller: Fixture.app)
        #expect(all.count == c.key.count + 1)
    }

    @Test(arguments: cases)
    func missingPrimaryKeyAttributesTakeTheirDefaultsAndCollide(_ c: ClassCase) throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let added = try #require(
            try keychain.add(
                NewItem(c.itemClass, attributes: [.label: .string("x")]),
                caller: Fixture.app, returning: .attributes))
        for (name, value, _) in c.key {
            let expected: AttributeValue =
                switch value {
                case .string: .string("")
                case .data: .data(Data())
                case .number: .number(0)
                case .date: .date(Date(timeIntervalSinceReferenceDate: 0))
                case .bool: .number(0)
                }
            if name == .applicationTag {
                #expect(added[name] == .string(""), "atag is a Blob attribute: its default is ''")
            } else if name == .protocol {
                #expect(added[name] == .number(0), "ptcl is a Number attribute: its default is 0")
            } else {
                #expect(added[name] == expected, "default of \(name)")
            }
        }
        #expect(
            status { try keychain.add(NewItem(c.itemClass, attributes: [.label: .string("y")]), caller: Fixture.app) }
                == .duplicateItem)
    }

    @Test(arguments: cases)
    func anAttributeOfAnotherClassIsNoSuchAttr(_ c: ClassCase) throws {
        let keychain = try Fixture.newKeychain(in: directory)
        var attributes = c.base
        attributes[c.foreign] = .string("x")
        let error = #expect(throws: KeychainError.self) {
            try keychain.add(NewItem(c.itemClass, attributes: attributes), caller: Fixture.app)
        }
        #expect(error?.status == .noSuchAttribute)
        #expect(error?.detail == "attribute '\(c.foreign.rawValue)' does not exist in class \(c.itemClass.rawValue)")
        #expect(
            status {
                _ = try keychain.copyMatching(
                    ItemQuery(c.itemClass, matching: [c.foreign: .string("x")]),
                    caller: Fixture.app)
            } == .noSuchAttribute)
    }

    @Test(arguments: cases)
    func syncAndAccessGroupCompleteThePrimaryKey(_ c: ClassCase) throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(NewItem(c.itemClass, attributes: c.base), caller: Fixture.app)
        var synchronizable = c.base
        synchronizable[.synchronizable] = .bool(true)
        try keychain.add(NewItem(c.itemClass, attributes: synchronizable), caller: Fixture.app)
        var shared = c.base
        shared[.accessGroup] = .string("com.example.shared")
        try keychain.add(NewItem(c.itemClass, attributes: shared), caller: Fixture.app)
        let all = try keychain.copyMatching(
            ItemQuery(c.itemClass, synchronizable: .any, limit: .all, returning: .attributes), caller: Fixture.app)
        #expect(all.count == 3)
    }

    /// Identities are composed above the engine (a certificate joined with its key); the engine stores none.
    @Test func theEngineHasNoIdentityItems() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        #expect(status { try keychain.add(NewItem(.identity), caller: Fixture.app) } == .unimplemented)
        #expect(status { _ = try keychain.copyMatching(ItemQuery(.identity), caller: Fixture.app) } == .unimplemented)
    }
}
