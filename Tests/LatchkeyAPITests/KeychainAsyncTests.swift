import Foundation
import Latchkey
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

@Suite(.dedicatedThreads) struct KeychainAsyncTests {
    struct Token: Codable, Equatable, Sendable { var value: String }

    @Test func asyncOverloadsDoTheSameWork() async throws {
        let memory = InMemoryKeychain()
        let keychain = memory.keychain(service: "async")
        try await keychain.set("v", forKey: "k")
        #expect(try await keychain.string(forKey: "k") == "v")
        try await keychain.set(Data([1]), forKey: "d")
        #expect(try await keychain.data(forKey: "d") == Data([1]))
        try await keychain.set(Token(value: "t"), forKey: "token")
        #expect(try await keychain.value(Token.self, forKey: "token") == Token(value: "t"))
        #expect(try await keychain.contains("k"))
        #expect(try await keychain.allKeys() == ["d", "k", "token"])
        #expect(try await keychain.attributes(forKey: "k")?.key == "k")
        #expect(try await keychain.remove("k"))
        #expect(try await keychain.removeAll())
        #expect(try await keychain.allKeys() == [])
    }

    @Test func asyncFailuresKeepTheirStatus() async {
        let memory = InMemoryKeychain()
        memory.lock()
        do {
            try await memory.keychain(service: "s").set("v", forKey: "k")
            Issue.record("expected a failure")
        } catch .interactionNotAllowed(let error) {
            #expect(error.status == .interactionNotAllowed)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func manyConcurrentTasks() async throws {
        let memory = InMemoryKeychain()
        let keychain = memory.keychain(service: "tasks")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<100 {
                group.addTask { try await keychain.set("v\(index)", forKey: "k\(index)") }
            }
            try await group.waitForAll()
        }
        #expect(try await keychain.allKeys().count == 100)
    }
}
