import Foundation
import Latchkey
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

@Suite(.dedicatedThreads) struct InMemoryKeychainTests {
    @Test func thousandsOfKeychainsForThousandsOfTests() throws {
        // Each test of a user's suite can make its own: no file, no Argon2id.
        for index in 0..<2_000 {
            let memory = InMemoryKeychain()
            let keychain = memory.keychain(service: "s")
            try keychain.set("v\(index)", forKey: "k")
            #expect(try keychain.string(forKey: "k") == "v\(index)")
        }
    }

    @Test func keychainsAreIndependent() throws {
        let a = InMemoryKeychain()
        let b = InMemoryKeychain()
        try a.keychain(service: "s").set("a", forKey: "k")
        #expect(try b.keychain(service: "s").string(forKey: "k") == nil)
    }

    @Test func theSameStatusCodesAsAFileKeychain() throws {
        let memory = InMemoryKeychain()
        let backend = memory.backend()
        _ = try backend.add(["class": "genp", "svce": "s", "v_Data": Data("x".utf8)])
        #expect(status { _ = try backend.add(["class": "genp", "svce": "s"]) } == .duplicateItem)
        #expect(status { _ = try backend.copyMatching(["class": "genp", "svce": "t"]) } == .itemNotFound)
        #expect(status { _ = try backend.copyMatching(["svce": "t"]) } == .param)
        #expect(status { _ = try backend.copyMatching(["class": "genp", "srvr": "t"]) } == .noSuchAttribute)
        #expect(status { _ = try backend.add(["class": "genp", "agrp": "not.mine"]) } == .missingEntitlement)
        memory.lock()
        #expect(status { _ = try backend.copyMatching(["class": "genp", "r_Data": true]) } == .interactionNotAllowed)
        memory.unlock()
        #expect(try backend.copyMatching(["class": "genp", "r_Data": true]) as? Data == Data("x".utf8))
    }

    @Test func itWorksWithTheTypedEngineToo() throws {
        let memory = InMemoryKeychain(applicationIdentifier: "com.example.typed")
        try memory.database.add(
            NewItem(.genericPassword, attributes: [.service: .string("s")]),
            caller: CallerIdentity(applicationIdentifier: "com.example.typed"))
        #expect(try memory.keychain(service: "s").allKeys() == [""], "the account defaults to the empty string")
        #expect(try memory.itemCount() == 1)
    }
}
