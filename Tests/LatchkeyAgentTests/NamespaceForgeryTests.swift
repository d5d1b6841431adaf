import Foundation
import Latchkey
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The second review's first attack (issue 30, point 1), run as it was run: by an unprivileged user, whose
/// agent serves a registered program. Inside `unshare -Urpf` the attacker is root of a user and pid namespace
/// of its own; a child connects to the agent and execs the registered program, and the attacker, holding a
/// copy of the socket, sends every frame with credentials naming the child — which the kernel allows there.
/// A peer in another user or pid namespace is never identified as a registered program
/// (`PeerIdentity.untrusted`): it gets what an unregistered one gets.
@Suite(.serialized, .dedicatedThreads) struct NamespaceForgeryTests {
    @Test func credentialsForgedInAUserNamespaceGetNothing() throws {
        let nobody = try #require(AgentHardeningTests.nobody)
        let sandbox = try AgentSandbox(user: nobody)
        try sandbox.start()
        try sandbox.unlock()
        // The registered program: /usr/bin/sleep, with client b's access group.
        try sandbox.registerClients()
        try sandbox.register("/usr/bin/sleep", appID: "sleeper", groups: ["latchkey-test-client-b"])
        #expect(try sandbox.client("b", "set", "mail", "bob", "b-secret") == "ok\n")
        let secretHex = Data("b-secret".utf8).map { String(format: "%02x", $0) }.joined()
        let query = AgentRequest.keychain(
            .copyMatching(
                ItemQuery(
                    .genericPassword, matching: [.service: .string("mail"), .account: .string("bob")],
                    returning: [.data])))
        let queryHex = query.encoded(id: 2).map { String(format: "%02x", $0) }.joined()
        // The review won 10 of 10 after making the agent SCHED_IDLE (which a user may do to its own processes):
        // the agent then looks at the child after its exec.
        let agent = try #require(sandbox.agent?.pid)
        let idle = try HelperProcess.run("/usr/bin/chrt", ["-i", "-a", "-p", "0", "\(agent)"])
        #expect(idle.status == 0, "\(idle.stderr)")
        let refusal =
            "pid \\d+ runs in another user namespace than the agent \\(a container or a sandbox\\), where the credentials "
            + "its messages carry cannot be trusted; the agent serves it as an unregistered program: let it open the keychain with "
            + "the passphrase"
        for round in 0..<10 {
            let result = sandbox.directory.file("forged-\(round)")
            let (program, words) = sandbox.asUser(
                "/usr/bin/unshare",
                [
                    "-Urpf", "/usr/bin/python3", AgentHardeningTests.tools + "/namespace-forgery.py",
                    sandbox.socketPath,
                    sandbox.keychainPath, "/usr/bin/sleep", queryHex, result,
                ])
            let output = try HelperProcess.run(program, words, environment: sandbox.environment)
            #expect(output.status == 0, "\(output.stderr)")
            let answers = try String(contentsOfFile: result, encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(!answers.joined().contains(secretHex), "round \(round): the secret reached the attacker")
            #expect(answers.count == 2, "round \(round): \(answers)")
            #expect(answers.first?.hasPrefix("status 0 ") == true, "round \(round): the hello is answered: \(answers)")
            // Refused as unidentified; or, when the agent looked before the exec, not answered at all (the
            // process runs another program than the one that connected).
            let second = answers.last ?? ""
            if second != "closed" {
                #expect(second.hasPrefix("status -34018 "), "round \(round): \(second)")
                let detail = Self.detail(second)
                #expect(detail.wholeMatch(of: try Regex(refusal)) != nil, "round \(round): \(detail)")
            }
        }
        #expect(sandbox.agentLog.contains("unidentified connection: pid "))
        // The agent carries on for the registered program itself.
        #expect(try sandbox.client("b", "get", "mail", "bob") == "b-secret\n")
    }

    /// A registered program run inside a user namespace, or a pid namespace, of the user's own making is
    /// not served as registered: from there its messages could be anyone's.
    @Test(arguments: [["-Ur"], ["-Urpf"]])
    func aRegisteredProgramInAnotherNamespaceIsServedAsUnregistered(_ unshare: [String]) throws {
        let nobody = try #require(AgentHardeningTests.nobody)
        let sandbox = try AgentSandbox(user: nobody)
        try sandbox.start()
        try sandbox.unlock()
        try sandbox.registerClients()
        #expect(try sandbox.client("b", "set", "mail", "bob", "b-secret") == "ok\n")
        #expect(
            try sandbox.client("b", "status") == "unlocked registered latchkey-test-client-b latchkey-test-client-b\n")
        let (program, words) = sandbox.asUser("/usr/bin/unshare", unshare + [AgentSandbox.clientPath("b"), "status"])
        let inside = try HelperProcess.run(program, words, environment: sandbox.environment)
        #expect(inside.stdout == "unlocked unregistered - \n", "\(inside.stderr)")
        let (reader, readWords) = sandbox.asUser(
            "/usr/bin/unshare", unshare + [AgentSandbox.clientPath("b"), "get", "mail", "bob"])
        let read = try HelperProcess.run(reader, readWords, environment: sandbox.environment)
        #expect(!read.stdout.contains("b-secret"))
        #expect(read.stdout.hasPrefix("error -34018 "), "\(read.stdout)")
        #expect(sandbox.agentLog.contains("runs in another user namespace than the agent"))
    }

    /// The text of a failure's detail in a "status <n> <hex>" line (a length-prefixed string first).
    static func detail(_ line: String) -> String {
        let hex = line.split(separator: " ").last.map(String.init) ?? ""
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), index < hex.endIndex {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        guard bytes.count >= 4 else { return "" }
        let length = Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16 | Int(bytes[3]) << 24
        return String(decoding: bytes.dropFirst(4).prefix(length), as: UTF8.self)
    }
}
