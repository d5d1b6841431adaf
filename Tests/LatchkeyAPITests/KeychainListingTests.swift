import Foundation
import Latchkey
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

@Suite(.dedicatedThreads) struct KeychainListingTests {
    let memory = InMemoryKeychain()

    @Test func allKeysAreSortedAndScoped() throws {
        let mail = memory.keychain(service: "mail")
        for key in ["carol", "alice", "bob"] { try mail.set("pw-\(key)", forKey: key) }
        try memory.keychain(service: "chat").set("x", forKey: "dave")
        #expect(try mail.allKeys() == ["alice", "bob", "carol"])
        #expect(try memory.keychain(service: "empty").allKeys() == [])
        #expect(try mail.allEntries().map(\.key) == ["alice", "bob", "carol"])
    }

    @Test func removeAllRemovesOnlyTheScope() throws {
        let mail = memory.keychain(service: "mail")
        for key in ["a", "b"] { try mail.set("x", forKey: key) }
        try mail.synchronizable(true).set("x", forKey: "synced")
        try memory.keychain(service: "chat").set("x", forKey: "c")
        #expect(try mail.removeAll())
        #expect(try mail.allKeys() == [])
        #expect(try mail.synchronizable(true).allKeys() == ["synced"])
        #expect(try memory.keychain(service: "chat").allKeys() == ["c"])
        #expect(try !mail.removeAll())
    }
}
