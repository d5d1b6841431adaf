import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// With latchkeyd unlocked and the helpers registered with it, neither asks for anything: no passphrase in
/// the environment, no terminal, one unlock for every git fetch and docker pull after it. A locked agent is
/// an error at once, and an unregistered helper is told why.
@Suite struct AgentHelperTests {
    func unlockedAgent(registering helpers: [String]) throws -> HelperSandbox {
        let sandbox = try HelperSandbox()
        try sandbox.startAgent()
        try sandbox.latchkey("unlock-keychain")
        for helper in helpers { try sandbox.register(helper) }
        return sandbox
    }

    @Test func registeredHelpersNeedNoPassphrase() throws {
        let sandbox = try unlockedAgent(registering: [HelperSandbox.git, HelperSandbox.docker])
        let approved = try sandbox.gitCredential(
            "approve", lines("protocol=https", "host=example.com", "username=alice", "password=s3cret"),
            environment: sandbox.headless)
        #expect(approved.status == 0 && approved.stderr.isEmpty, "\(approved.stderr)")
        for _ in 0..<3 {
            let filled = try sandbox.gitCredential(
                "fill", lines("protocol=https", "host=example.com"), environment: sandbox.headless)
            #expect(filled.stdout == lines("protocol=https", "host=example.com", "username=alice", "password=s3cret"))
            #expect(filled.stderr.isEmpty)
        }
        let stored = try sandbox.dockerHelper(
            "store", #"{"ServerURL":"ghcr.io","Username":"<token>","Secret":"t0ken"}"#,
            environment: sandbox.headless)
        #expect(stored.status == 0, "\(stored.stdout)")
        for _ in 0..<3 {
            let pulled = try sandbox.dockerHelper("get", "ghcr.io", environment: sandbox.headless)
            #expect(pulled.stdout == #"{"ServerURL":"ghcr.io","Username":"\u003ctoken\u003e","Secret":"t0ken"}"# + "\n")
        }
        #expect(
            try sandbox.dockerHelper("list", environment: sandbox.headless).stdout
                == #"{"https://ghcr.io":"\u003ctoken\u003e"}"# + "\n")
        // The items are the agent's, in each helper's own group.
        let groups = try sandbox.internetPasswords().compactMap { $0[.accessGroup]?.stringValue }.sorted()
        #expect(groups == ["docker-credential-latchkey", "git-credential-latchkey"])
    }

    @Test func aLockedAgentIsAnErrorAtOnce() throws {
        let sandbox = try unlockedAgent(registering: [HelperSandbox.git, HelperSandbox.docker])
        _ = try sandbox.gitHelper(
            "store", lines("protocol=https", "host=example.com", "username=alice", "password=s3cret"),
            environment: sandbox.headless)
        _ = try sandbox.dockerHelper(
            "store", #"{"ServerURL":"ghcr.io","Username":"alice","Secret":"s"}"#, environment: sandbox.headless)
        try sandbox.latchkey("lock-keychain")
        let started = Date()
        let output = try sandbox.gitHelper(
            "get", lines("protocol=https", "host=example.com"), environment: sandbox.headless)
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(output.status == 36)
        #expect(output.stdout.isEmpty)
        #expect(output.stderr.hasPrefix("git-credential-latchkey: get: User interaction is not allowed."))
        let docker = try sandbox.dockerHelper("get", "ghcr.io", environment: sandbox.headless)
        #expect(docker.status == 1 && docker.stdout.hasPrefix("User interaction is not allowed."))
    }

    @Test func anUnregisteredHelperIsToldWhy() throws {
        let sandbox = try unlockedAgent(registering: [])
        let output = try sandbox.gitHelper(
            "get", lines("protocol=https", "host=example.com"), environment: sandbox.headless)
        #expect(output.status == 30)
        #expect(output.stderr.hasPrefix("git-credential-latchkey: get: "))
        #expect(output.stderr.contains("not registered with the agent"))
        // With the passphrase it opens the keychain itself, as without an agent.
        let embedded = try sandbox.gitHelper("get", lines("protocol=https", "host=example.com"))
        #expect(embedded.status == 0 && embedded.stderr.isEmpty, "\(embedded.stderr)")
    }
}
