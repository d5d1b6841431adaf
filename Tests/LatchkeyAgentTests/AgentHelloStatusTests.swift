import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@testable import LatchkeyEngine

/// A client asks for the agent's status together with its hello (one round trip fewer on every connection):
/// the first status after connecting is that answer, without a request of its own; any request in between
/// makes it stale, and a later status is asked.
@Suite(.serialized, .dedicatedThreads) struct AgentHelloStatusTests {
    static func servedClient(_ sandbox: AgentSandbox) throws -> AgentClient {
        try sandbox.start()
        try sandbox.unlock()
        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        try sandbox.register(me, appID: "hello-status", groups: ["hello-status"])
        return try #require(
            try AgentClient.connect(keychainPath: sandbox.keychainPath, environment: sandbox.environment))
    }

    @Test func theFirstStatusIsTheOneAnsweredWithTheHello() throws {
        let sandbox = try AgentSandbox()
        let client = try Self.servedClient(sandbox)
        sandbox.stop()  // Gone before the first status is read: that status came with the hello.
        let status = try client.status()
        #expect(
            status.caller
                == .registered(CallerIdentity(applicationIdentifier: "hello-status", accessGroups: ["hello-status"])))
        #expect(status.lockState == .unlocked)
        #expect(status.keychainPath == sandbox.keychainPath)
        // Taken: the next one is asked, and no agent answers it.
        #expect(throws: KeychainError(.notAvailable, "the Latchkey agent is not running")) {
            try client.status()
        }
    }

    @Test func aRequestInBetweenMakesTheHelloStatusStale() throws {
        let sandbox = try AgentSandbox()
        let client = try Self.servedClient(sandbox)
        let service = AgentKeychainService(client: client)
        // Answered by the agent (an empty keychain): a request after the hello.
        #expect {
            try service.copyMatching(ItemQuery(.genericPassword, limit: .all))
        } throws: { ($0 as? KeychainError)?.status == .itemNotFound }
        sandbox.stop()
        #expect(throws: KeychainError(.notAvailable, "the Latchkey agent is not running")) {
            try client.status()
        }
    }
}
