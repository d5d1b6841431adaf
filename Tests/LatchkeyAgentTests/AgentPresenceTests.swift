import Foundation
import LatchkeyTestSupport
import Testing

/// Items whose access control asks for the user (SecAccessControl `.userPresence`), through the agent: the
/// agent asks in pinentry — here a scripted one that speaks pinentry's Assuan protocol — and releases the
/// secret only when the keychain passphrase is confirmed; each refusal has Apple's status.
@Suite(.serialized, .dedicatedThreads) struct AgentPresenceTests {
    /// A sandbox whose agent asks through the scripted pinentry; returns it with the pinentry's log and
    /// answer files.
    func sandbox() throws -> (AgentSandbox, log: String, answer: String) {
        let sandbox = try AgentSandbox()
        let log = sandbox.directory.file("pinentry.log")
        let answer = sandbox.directory.file("pinentry.answer")
        sandbox.agentEnvironment["LATCHKEY_PINENTRY"] = AgentHardeningTests.tools + "/fake-pinentry.py"
        sandbox.agentEnvironment["FAKE_PINENTRY_LOG"] = log
        sandbox.agentEnvironment["FAKE_PINENTRY_ANSWER"] = answer
        try sandbox.start()
        try sandbox.unlock()
        try sandbox.registerClients()
        #expect(try sandbox.client("a", "secitem-set-protected", "mail", "alice", "s3cret") == "SecItemAdd 0\n")
        #expect(try sandbox.client("a", "secitem-set", "mail", "bob", "open") == "SecItemAdd 0\n")
        return (sandbox, log, answer)
    }

    func answer(_ file: String, _ how: String) throws {
        try (how + "\n").write(toFile: file, atomically: true, encoding: .utf8)
    }

    @Test func theSecretIsReleasedOnlyWhenTheUserConfirmsInPinentry() throws {
        let (sandbox, log, answerFile) = try sandbox()
        try answer(answerFile, "pin:" + AgentSandbox.passphrase)
        #expect(
            try sandbox.client("a", "secitem-get-ui", "mail", "alice", "allow", "Read the mail password")
                == "SecItemCopyMatching 0 s3cret\n")
        let asked = sandbox.file(log)
        #expect(
            asked.contains(
                "SETDESC latchkey-test-client-a wants to use a protected keychain item: Read the mail password\n"),
            "\(asked)")
        #expect(asked.contains("SETPROMPT Passphrase:\n"))
        #expect(asked.contains("GETPIN\n"))
        #expect(!asked.contains(AgentSandbox.passphrase), "pinentry is told nothing secret")

        // An item without access control never asks.
        try "".write(toFile: log, atomically: true, encoding: .utf8)
        #expect(try sandbox.client("a", "secitem-get-ui", "mail", "bob", "allow") == "SecItemCopyMatching 0 open\n")
        #expect(sandbox.file(log) == "")
        #expect(sandbox.agentLog.contains("pinentry answered for latchkey-test-client-a"))
    }

    @Test func refusalsHaveApplesStatuses() throws {
        let (sandbox, log, answerFile) = try sandbox()
        try answer(answerFile, "cancel")
        #expect(try sandbox.client("a", "secitem-get-ui", "mail", "alice", "allow") == "SecItemCopyMatching -128 -\n")
        try answer(answerFile, "pin:not the passphrase")
        #expect(try sandbox.client("a", "secitem-get-ui", "mail", "alice", "allow") == "SecItemCopyMatching -25293 -\n")
        try answer(answerFile, "timeout")
        #expect(try sandbox.client("a", "secitem-get-ui", "mail", "alice", "allow") == "SecItemCopyMatching -25308 -\n")
        try answer(answerFile, "die")
        #expect(try sandbox.client("a", "secitem-get-ui", "mail", "alice", "allow") == "SecItemCopyMatching -25308 -\n")

        // kSecUseAuthenticationUIFail: refused without asking; Skip: the item is left out.
        try "".write(toFile: log, atomically: true, encoding: .utf8)
        #expect(try sandbox.client("a", "secitem-get-ui", "mail", "alice", "fail") == "SecItemCopyMatching -25308 -\n")
        #expect(try sandbox.client("a", "secitem-get-ui", "mail", "alice", "skip") == "SecItemCopyMatching -25300 -\n")
        #expect(sandbox.file(log) == "", "neither asked")
        // The attributes never need the user.
        #expect(try sandbox.client("a", "get", "mail", "bob") == "open\n")
    }

    @Test func withoutAPinentryNobodyCanBeAsked() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()  // LATCHKEY_PINENTRY names a program that does not exist.
        try sandbox.unlock()
        try sandbox.registerClients()
        #expect(try sandbox.client("a", "secitem-set-protected", "mail", "alice", "s3cret") == "SecItemAdd 0\n")
        #expect(try sandbox.client("a", "secitem-get-ui", "mail", "alice", "allow") == "SecItemCopyMatching -25308 -\n")
        #expect(
            sandbox.agentLog.contains("asking for protected items through \(sandbox.directory.file("no-pinentry"))"))
    }
}
