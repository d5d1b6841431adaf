import Foundation
import LatchkeyTestSupport
import Testing

/// Without the agent, a program's own keychain asks for the user at its terminal before it releases an item
/// whose access control asks for them — typed through a pseudo-terminal here, as a person would.
@Suite(.dedicatedThreads) struct TerminalPresenceTests {
    let directory = TemporaryDirectory()
    static let passphrase = "terminal passphrase"

    /// The client's environment: its own keychain, unlocked from the environment, and no agent.
    var environment: [String: String] {
        [
            "HOME": directory.path, "PATH": "/usr/bin:/bin", "LATCHKEY_KEYCHAIN": directory.file("k.keychain"),
            "LATCHKEY_AGENT_SOCKET": directory.file("no-agent.sock"), "LATCHKEY_PASSPHRASE": Self.passphrase,
        ]
    }

    func prepare() throws {
        let added = try HelperProcess.run(
            AgentSandbox.clientPath("a"), ["secitem-set-protected", "mail", "alice", "s3cret"],
            environment: environment)
        #expect(added.stdout == "SecItemAdd 0\n", "\(added.stderr)")
    }

    func ask() throws -> PseudoTerminalSession {
        let session = try PseudoTerminalSession(
            executable: AgentSandbox.clientPath("a"),
            arguments: ["secitem-get-ui", "mail", "alice", "allow", "Read the mail password"],
            environment: environment)
        #expect(
            session.expect(
                "latchkey-test-client-a wants to use a protected keychain item: Read the mail password.\r\n"
                    + "Keychain passphrase to allow it (empty to refuse): "))
        return session
    }

    @Test func theRightPassphraseReleasesTheSecret() throws {
        try prepare()
        let session = try ask()
        session.send(Self.passphrase)
        #expect(session.wait() == 0)
        #expect(session.transcript.hasSuffix("SecItemCopyMatching 0 s3cret\r\n"), "\(session.transcript)")
        #expect(!session.transcript.contains(Self.passphrase), "echo is off")
    }

    @Test func everyOtherAnswerIsRefusedWithApplesStatus() throws {
        try prepare()
        let wrong = try ask()
        wrong.send("not it")
        #expect(wrong.wait() == 0)
        #expect(wrong.transcript.hasSuffix("SecItemCopyMatching -25293 -\r\n"), "\(wrong.transcript)")

        let empty = try ask()
        empty.send("")
        #expect(empty.wait() == 0)
        #expect(empty.transcript.hasSuffix("SecItemCopyMatching -128 -\r\n"), "\(empty.transcript)")

        let endOfInput = try ask()
        endOfInput.sendEndOfInput()
        #expect(endOfInput.wait() == 0)
        #expect(endOfInput.transcript.hasSuffix("SecItemCopyMatching -128 -\r\n"), "\(endOfInput.transcript)")

        // No terminal at all (a new session without one): nobody to ask.
        let detached = try HelperProcess.run(
            AgentSandbox.clientPath("a"), ["secitem-get-ui", "mail", "alice", "allow"],
            environment: environment)
        #expect(detached.stdout == "SecItemCopyMatching -25308 -\n", "\(detached.stderr)")
    }
}
