import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The question (issue 53, point 2) on the agent's socket, with the scripted pinentry: it names the asking
/// program (path, pid, parent), the item and who stored it; Deny is remembered until the keychain locks,
/// Allow once does not persist, Always allow does (across a restart) until `latchkey access remove`; with no
/// display the refusal names the command that grants the item; a caller in another namespace is never asked.
@Suite(.serialized, .dedicatedThreads) struct AgentAccessPromptTests {
    let sandbox: AgentSandbox
    var pinentryLog: String { sandbox.directory.file("pinentry.log") }
    var pinentryAnswer: String { sandbox.directory.file("pinentry.answer") }
    static let b = AgentSandbox.clientPath("b")

    init() throws {
        sandbox = try AgentSandbox()
        sandbox.agentEnvironment["LATCHKEY_PINENTRY"] = AgentHardeningTests.tools + "/fake-pinentry.py"
        sandbox.agentEnvironment["FAKE_PINENTRY_LOG"] = pinentryLog
        sandbox.agentEnvironment["FAKE_PINENTRY_ANSWER"] = pinentryAnswer
        sandbox.agentEnvironment["DISPLAY"] = ":99"
        try answer("cancel")
    }

    func answer(_ how: String) throws {
        try (how + "\n").write(toFile: pinentryAnswer, atomically: true, encoding: .utf8)
    }
    var questions: Int { sandbox.file(pinentryLog).components(separatedBy: "CONFIRM\n").count - 1 }

    /// Starts the agent with client a's item `mail`/`k` in group "a"; its reference in hex.
    func startWithItem() throws -> String {
        try sandbox.start()
        try sandbox.unlock()
        try sandbox.register(AgentSandbox.clientPath("a"), appID: "com.example.a", groups: ["a"])
        #expect(try sandbox.client("a", "set", "mail", "k", "secret one") == "ok\n")
        let database = try KeychainDatabase.open(at: sandbox.keychainPath)
        try database.unlock(with: Passphrase(AgentSandbox.passphrase))
        let found = try database.copyMatching(
            ItemQuery(.genericPassword, matching: [.account: .string("k")], returning: .reference),
            caller: CallerIdentity(applicationIdentifier: "test", accessGroups: ["*"]))
        return Hex.encode(try #require(found.first?.persistentReference))
    }

    @Test func eachAnswerDoesWhatItSays() throws {
        let item = try startWithItem()
        // Deny: refused, and not asked again until the keychain locks.
        let denied = try sandbox.client("b", "get", "mail", "k")
        #expect(denied == "error -128 the user denied \(Self.b) this item\n")
        #expect(questions == 1)
        let asked = sandbox.file(pinentryLog)
        #expect(
            asked.contains(
                "SETDESC \(Self.b) wants to use your confidential information stored in this keychain item:\n"
                    + "  service=mail account=k\n  stored by a\nAsked by: \(Self.b) (pid "), "\(asked)")
        #expect(asked.contains(#"SETOK Allow once\#nSETNOTOK Always allow\#nSETCANCEL Deny\#n"#))
        #expect(asked.range(of: #"\(pid \d+, parent \d+\)\nAlways allow adds it"#, options: .regularExpression) != nil)
        #expect(!asked.contains("secret one"))
        try answer("confirm")
        #expect(
            try sandbox.client("b", "get", "mail", "k")
                == "error -128 the user denied \(Self.b) this item; it is not asked again until the keychain locks\n")
        #expect(questions == 1)

        // After a lock: asked again. Allow once reads it and adds nothing to the list.
        #expect(try sandbox.cli("lock-keychain").status == 0)
        try sandbox.unlock()
        #expect(try sandbox.client("b", "get", "mail", "k") == "secret one\n")
        #expect(questions == 2)
        #expect(try sandbox.cli("access", "list").stdout == "")

        // Always allow: on the list, read without a question from then on, across a restart.
        try answer("notok")
        #expect(try sandbox.client("b", "get", "mail", "k") == "secret one\n")
        #expect(questions == 3)
        let listed = try sandbox.cli("access", "list").stdout
        #expect(listed.contains("    executable \(Self.b) "), "\(listed)")
        #expect(listed.contains(" by always allow\n"))
        sandbox.stop()
        try sandbox.start()
        try sandbox.unlock()
        #expect(try sandbox.client("b", "get", "mail", "k") == "secret one\n")
        #expect(questions == 3)

        // Taken off: asked again at once (and denied).
        try answer("cancel")
        #expect(try sandbox.cli("access", "remove", item, Self.b).status == 0)
        #expect(try sandbox.client("b", "get", "mail", "k") == "error -128 the user denied \(Self.b) this item\n")
        #expect(questions == 4)

        // The log has every answer's read and refusal.
        let log = try sandbox.cli("log", "--program", Self.b).stdout
        #expect(log.components(separatedBy: ": the user's answer: allow once\n").count == 2, "\(log)")
        #expect(log.components(separatedBy: ": the user's answer: always allow\n").count == 2)
        #expect(log.components(separatedBy: ": the item's access list\n").count == 2)
    }

    @Test func withoutADisplayTheRefusalNamesTheGrant() throws {
        sandbox.agentEnvironment["DISPLAY"] = nil
        let item = try startWithItem()
        let refused = try sandbox.client("b", "get", "mail", "k")
        #expect(refused.hasPrefix("error -34018 \(Self.b) is not registered with the agent"), "\(refused)")
        #expect(
            refused.contains(
                "\(Self.b) is not on the access list of an item it asked for, and there is no display or terminal to "
                    + "ask on: to let it read the item, latchkey access add \(item) \(Self.b)"), "\(refused)")
        #expect(questions == 0)
    }

    @Test func aWildcardProgramIsNeverAsked() throws {
        _ = try startWithItem()
        try answer("confirm")
        let registered = try sandbox.cli("register-application", "--app-id", "b", "--wildcard", Self.b)
        #expect(registered.status == 0, "\(registered.stderr)")
        #expect(try sandbox.client("b", "get", "mail", "k") == "secret one\n")
        #expect(try sandbox.client("b", "get", "mail", "nothing") == "<nil>\n")
        #expect(questions == 0)
    }

    @Test func anExecRaceIsNeverAsked() throws {
        _ = try startWithItem()
        try answer("confirm")
        let query = AgentRequest.keychain(
            .copyMatching(
                ItemQuery(
                    .genericPassword, matching: [.service: .string("mail"), .account: .string("k")], returning: .data)))
        let queryHex = query.encoded(id: 2).map { String(format: "%02x", $0) }.joined()
        // A process says hello, execs client b, and a child that kept the socket asks: not answered at all.
        let result = sandbox.directory.file("race")
        let output = try HelperProcess.run(
            "/usr/bin/python3",
            [
                AgentHardeningTests.tools + "/exec-race.py", "child", sandbox.socketPath, sandbox.keychainPath, Self.b,
                queryHex, result,
            ],
            environment: sandbox.environment)
        #expect(output.status == 0, "\(output.stderr)")
        try waitUntil("the attacker's result") { FileManager.default.fileExists(atPath: result) }
        #expect(try String(contentsOfFile: result, encoding: .utf8) == "closed\n")
        #expect(questions == 0)
    }

    @Test func aCallerInAnotherNamespaceIsNeverAsked() throws {
        _ = try startWithItem()
        let output = try HelperProcess.run(
            "/usr/bin/unshare", ["-Ur", Self.b, "get", "mail", "k"], environment: sandbox.environment)
        #expect(output.stdout.hasPrefix("error -34018 "), "\(output.stdout) \(output.stderr)")
        #expect(!output.stdout.contains("secret one"))
        #expect(questions == 0)
    }
}
