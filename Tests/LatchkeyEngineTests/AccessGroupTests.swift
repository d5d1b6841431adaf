import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// Access groups: the Linux counterpart of entitlements (SEMANTICS.md §2 and §5).
@Suite(.dedicatedThreads) struct AccessGroupTests {
    let directory = TemporaryDirectory()

    @Test func oneKeychainServesManyCallersEachSeeingItsOwnGroups() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(Fixture.password(service: "s", account: "mine", secret: "app"), caller: Fixture.app)
        try keychain.add(Fixture.password(service: "s", account: "theirs", secret: "other"), caller: Fixture.other)
        #expect(
            try keychain.copyMatching(Fixture.query(service: "s", limit: .all), caller: Fixture.app).map(\.data)
                == [Data("app".utf8)])
        #expect(
            try keychain.copyMatching(Fixture.query(service: "s", limit: .all), caller: Fixture.other).map(\.data)
                == [Data("other".utf8)])
        #expect(
            status {
                try keychain.update(
                    Fixture.query(service: "s", account: "theirs", returning: []),
                    with: ItemChanges(data: Data()), caller: Fixture.app)
            } == .itemNotFound)
        #expect(
            status {
                try keychain.delete(
                    Fixture.query(service: "s", account: "theirs", returning: []),
                    caller: Fixture.app)
            } == .itemNotFound)
        #expect(
            try keychain.copyMatching(Fixture.query(service: "s", limit: .all), caller: Fixture.everything).count == 2)
    }

    @Test func theSamePrimaryKeyInTwoGroupsIsTwoItems() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(Fixture.password(service: "s", account: "a"), caller: Fixture.app)
        try keychain.add(Fixture.password(service: "s", account: "a"), caller: Fixture.other)
        try keychain.add(
            Fixture.password(service: "s", account: "a", extra: [.accessGroup: .string("com.example.shared")]),
            caller: Fixture.app)
        #expect(try keychain.rowCount() == 3)
    }

    @Test func namingAGroupTheCallerLacksIsMissingEntitlement() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(Fixture.password(service: "s", account: "a"), caller: Fixture.other)
        let foreign: [AttributeKey: AttributeValue] = [.accessGroup: .string("com.example.other")]
        let failure = #expect(throws: KeychainError.self) {
            try keychain.add(Fixture.password(service: "s", account: "b", extra: foreign), caller: Fixture.app)
        }
        #expect(failure?.status == .missingEntitlement)
        #expect(failure?.detail == "caller com.example.app is not entitled to access group com.example.other")
        #expect(
            status {
                _ = try keychain.copyMatching(
                    ItemQuery(.genericPassword, matching: foreign), caller: Fixture.app)
            } == .missingEntitlement)
        #expect(
            status { try keychain.delete(ItemQuery(.genericPassword, matching: foreign), caller: Fixture.app) }
                == .missingEntitlement)
        try keychain.add(Fixture.password(service: "s", account: "c"), caller: Fixture.app)
        #expect(
            status {
                try keychain.update(
                    Fixture.query(service: "s", account: "c", returning: []),
                    with: ItemChanges(attributes: foreign), caller: Fixture.app)
            }
                == .missingEntitlement)
    }

    @Test func movingAnItemToAnotherOfTheCallersGroups() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(Fixture.password(service: "s", account: "a"), caller: Fixture.app)
        try keychain.update(
            Fixture.query(service: "s", returning: []),
            with: ItemChanges(attributes: [.accessGroup: .string("com.example.shared")]), caller: Fixture.app)
        let sharedOnly = CallerIdentity(
            applicationIdentifier: "com.example.widget", accessGroups: ["com.example.shared"])
        #expect(
            try keychain.copyMatching(Fixture.query(service: "s"), caller: sharedOnly).first?.data
                == Data("s3cret".utf8))
    }

    @Test func aCallerWithoutGroupsIsRefusedEverything() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let nobody = CallerIdentity(applicationIdentifier: "com.example.nobody", accessGroups: [])
        #expect(
            status { try keychain.add(Fixture.password(service: "s", account: "a"), caller: nobody) }
                == .missingEntitlement)
        #expect(
            status { _ = try keychain.copyMatching(Fixture.query(service: "s"), caller: nobody) } == .missingEntitlement
        )
        #expect(
            status { try keychain.delete(Fixture.query(service: "s", returning: []), caller: nobody) }
                == .missingEntitlement)
    }

    @Test func theWildcardIsNotAGroupAnItemCanLiveIn() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        #expect(
            status { try keychain.add(Fixture.password(service: "s", account: "a"), caller: Fixture.everything) }
                == .missingEntitlement)
        #expect(
            status {
                try keychain.add(
                    Fixture.password(service: "s", account: "a", extra: [.accessGroup: .string("*")]),
                    caller: Fixture.everything)
            } == .param)
        try keychain.add(
            Fixture.password(service: "s", account: "a", extra: [.accessGroup: .string("any.group")]),
            caller: Fixture.everything)
    }
}
