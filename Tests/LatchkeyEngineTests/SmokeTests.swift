import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@Suite(.dedicatedThreads) struct SmokeTests {
    @Test func addFindUpdateDelete() throws {
        let dir = TemporaryDirectory()
        let keychain = try Fixture.newKeychain(in: dir)
        try keychain.add(Fixture.password(service: "mail", account: "alice"), caller: Fixture.app)
        let found = try keychain.copyMatching(Fixture.query(service: "mail", account: "alice"), caller: Fixture.app)
        #expect(found.count == 1)
        #expect(found[0].data == Data("s3cret".utf8))
        try keychain.update(
            Fixture.query(service: "mail", account: "alice", returning: []),
            with: ItemChanges(data: Data("new".utf8)), caller: Fixture.app)
        let again = try keychain.copyMatching(Fixture.query(service: "mail"), caller: Fixture.app)
        #expect(again[0].data == Data("new".utf8))
        #expect(try keychain.delete(Fixture.query(service: "mail", returning: []), caller: Fixture.app) == 1)
        #expect(
            status { _ = try keychain.copyMatching(Fixture.query(service: "mail"), caller: Fixture.app) }
                == .itemNotFound)
    }
}
