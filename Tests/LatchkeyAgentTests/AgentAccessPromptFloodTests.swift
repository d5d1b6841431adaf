import Foundation
import Latchkey
import LatchkeyTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// No prompt storms (issue 53, point 2): 10,000 requests for an item a program may not read, on four
/// connections at once while the user takes half a second to answer, cause one dialog — the others are
/// refused while it is open, and after the denial without asking — and the agent does not grow.
@Suite(.serialized, .dedicatedThreads) struct AgentAccessPromptFloodTests {
    static let testProgram = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path

    /// The agent's resident memory in KiB (`VmRSS`).
    static func residentKiB(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    @Test func tenThousandRequestsCauseOneDialogAndNoGrowth() throws {
        let sandbox = try AgentSandbox()
        let log = sandbox.directory.file("pinentry.log")
        let answer = sandbox.directory.file("pinentry.answer")
        try "cancel\n".write(toFile: answer, atomically: true, encoding: .utf8)
        sandbox.agentEnvironment["LATCHKEY_PINENTRY"] = AgentHardeningTests.tools + "/fake-pinentry.py"
        sandbox.agentEnvironment["FAKE_PINENTRY_LOG"] = log
        sandbox.agentEnvironment["FAKE_PINENTRY_ANSWER"] = answer
        sandbox.agentEnvironment["FAKE_PINENTRY_DELAY"] = "0.5"
        sandbox.agentEnvironment["DISPLAY"] = ":99"
        // Without the access log: this test is about the dialog, not 10,000 synced commits.
        try sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose", "--no-access-log"])
        try sandbox.unlock()
        try sandbox.register(AgentSandbox.clientPath("a"), appID: "com.example.a", groups: ["a"])
        #expect(try sandbox.client("a", "set", "mail", "k", "secret") == "ok\n")
        try sandbox.register(Self.testProgram, appID: "com.example.tests", groups: ["tests"])
        let agent = try #require(sandbox.agent?.pid)
        let query = ItemQuery(
            .genericPassword, matching: [.service: .string("mail"), .account: .string("k")], returning: .data)

        func flood(_ requests: Int) throws -> [KeychainStatus: Int] {
            let statuses = Mutex<[KeychainStatus: Int]>([:])
            let clients = try (0..<4).map { _ in
                AgentKeychainService(
                    client: try #require(
                        try AgentClient.connect(keychainPath: sandbox.keychainPath, environment: sandbox.environment)))
            }
            DispatchQueue.concurrentPerform(iterations: 4) { index in
                for _ in 0..<(requests / 4) {
                    let status: KeychainStatus
                    do throws(KeychainError) {
                        _ = try clients[index].copyMatching(query)
                        status = .success
                    } catch {
                        status = error.status
                    }
                    statuses.withLock { $0[status, default: 0] += 1 }
                }
            }
            return statuses.withLock { $0 }
        }
        var statuses = try flood(2_000)
        let before = try Self.residentKiB(agent)
        for (status, count) in try flood(8_000) { statuses[status, default: 0] += count }
        let after = try Self.residentKiB(agent)

        #expect(statuses[.success] == nil, "never read: \(statuses)")
        #expect(statuses.values.reduce(0, +) == 10_000)
        #expect(Set(statuses.keys).isSubset(of: [.userCanceled, .interactionNotAllowed]), "\(statuses)")
        #expect(sandbox.file(log).components(separatedBy: "CONFIRM\n").count - 1 == 1, "one dialog")
        #expect(after - before < 2_048, "the agent grew from \(before) KiB to \(after) KiB")
    }
}
