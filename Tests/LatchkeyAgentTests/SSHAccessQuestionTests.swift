import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// The access question (issue 53) through the SSH agent: a key open to registered programs only is shown to
/// an identified program that is not registered for it when the user can be asked, and its first signature
/// asks — naming the program and the key, never the key's secret — Deny (remembered until the keychain
/// locks), Allow once (nothing kept), Always allow (on the key's access list, no more questions, until
/// `latchkey access remove`). Such a program never removes or replaces the key.
@Suite(.serialized, .dedicatedThreads) struct SSHAccessQuestionTests {
    static let keygen = "/usr/bin/ssh-keygen"

    /// A sandbox whose agent has a display to ask on, with the key `restricted` open to registered programs
    /// only; the path of its public key file.
    func restrictedKey() throws -> (SSHSandbox, String) {
        let ssh = try SSHSandbox(start: false)
        ssh.agent.agentEnvironment["DISPLAY"] = ":99"
        try ssh.agent.start()
        try ssh.agent.unlock()
        try waitUntil("the SSH agent socket") { FileManager.default.fileExists(atPath: ssh.socketPath) }
        #expect(try ssh.agent.cli("ssh-key", "create", "restricted").status == 0)
        #expect(try ssh.agent.cli("ssh-key", "set", "restricted", "--programs", "registered").status == 0)
        let line = try ssh.agent.cli("ssh-key", "public", "restricted").stdout
        let path = ssh.directory.file("restricted.pub")
        try line.write(toFile: path, atomically: true, encoding: .utf8)
        return (ssh, path)
    }

    func sign(_ ssh: SSHSandbox, _ publicKey: String) throws -> Bool {
        let message = ssh.directory.file("message-\(UUID().uuidString)")
        try "signed\n".write(toFile: message, atomically: true, encoding: .utf8)
        return try ssh.run("ssh-keygen", ["-Y", "sign", "-n", "file", "-f", publicKey, message]).status == 0
    }

    func questions(_ ssh: SSHSandbox) -> Int {
        ssh.agent.file(ssh.pinentryLog).components(separatedBy: "CONFIRM\n").count - 1
    }

    @Test func eachAnswerDoesWhatItSays() throws {
        let (ssh, key) = try restrictedKey()
        let fingerprint = try #require(
            try ssh.agent.cli("ssh-key", "list").stdout.split(separator: " ").dropFirst().first)
        // Seen, because the user can be asked about it.
        #expect(try ssh.sshAdd("-l").stdout.hasSuffix(" restricted (ECDSA)\n"))

        // Deny: no signature, and no second question until the keychain locks.
        #expect(try !sign(ssh, key))
        #expect(questions(ssh) == 1)
        let asked = ssh.agent.file(ssh.pinentryLog)
        #expect(
            asked.contains(
                "SETDESC \(Self.keygen) wants to use your confidential information stored in this keychain item:\n"
                    + "  the SSH key restricted (\(fingerprint))\nAsked by: \(Self.keygen) (pid "), "\(asked)")
        #expect(asked.contains(#"SETOK Allow once\#nSETNOTOK Always allow\#nSETCANCEL Deny\#n"#))
        try ssh.answerPinentry("confirm")
        #expect(try !sign(ssh, key))
        #expect(questions(ssh) == 1)

        // After a lock, asked again: Allow once signs and keeps nothing.
        #expect(try ssh.agent.cli("lock-keychain").status == 0)
        try ssh.agent.unlock()
        #expect(try sign(ssh, key))
        #expect(questions(ssh) == 2)
        #expect(try ssh.agent.cli("access", "list").stdout == "")

        // Always allow: on the key's list, and no more questions.
        try ssh.answerPinentry("notok")
        #expect(try sign(ssh, key))
        #expect(questions(ssh) == 3)
        let listed = try ssh.agent.cli("access", "list").stdout
        #expect(listed.contains("    executable \(Self.keygen) "), "\(listed)")
        #expect(try sign(ssh, key))
        #expect(questions(ssh) == 3)

        // Taken off with one command: asked again at once.
        try ssh.answerPinentry("cancel")
        let reference = try #require(listed.split(separator: " ").first)
        #expect(try ssh.agent.cli("access", "remove", String(reference), Self.keygen).status == 0)
        #expect(try !sign(ssh, key))
        #expect(questions(ssh) == 4)
        #expect(ssh.agent.agentLog.contains("the user denied \(Self.keygen) (pid "))
    }

    @Test func aProgramThatMayBeAskedNeverRemovesTheKey() throws {
        let (ssh, _) = try restrictedKey()
        #expect(try ssh.sshAdd("-D").status == 0)
        #expect(try ssh.sshAdd("-d", ssh.directory.file("restricted.pub")).status != 0)
        #expect(try ssh.storedKeys().count == 1)
        #expect(questions(ssh) == 0)
    }

    @Test func aWildcardProgramIsNeverAsked() throws {
        let (ssh, key) = try restrictedKey()
        #expect(try ssh.agent.cli("ssh-key", "set", "restricted", "--programs", "org.example.other").status == 0)
        #expect(try ssh.agent.cli("register-application", "--app-id", "keygen", "--wildcard", Self.keygen).status == 0)
        try ssh.answerPinentry("confirm")
        #expect(try !sign(ssh, key))
        #expect(questions(ssh) == 0)
    }

    @Test func aProgramInAnotherNamespaceIsNeverAsked() throws {
        let (ssh, key) = try restrictedKey()
        try ssh.answerPinentry("confirm")
        let message = ssh.directory.file("message")
        try "signed\n".write(toFile: message, atomically: true, encoding: .utf8)
        let signed = try HelperProcess.run(
            "/usr/bin/unshare", ["-Ur", Self.keygen, "-Y", "sign", "-n", "file", "-f", key, message],
            environment: ssh.environment, timeout: 60)
        #expect(signed.status != 0)
        #expect(questions(ssh) == 0)
        // Nor shown the key.
        let listed = try HelperProcess.run(
            "/usr/bin/unshare", ["-Ur", "/usr/bin/ssh-add", "-l"], environment: ssh.environment, timeout: 60)
        #expect(listed.stdout == "The agent has no identities.\n", "\(listed.stdout) \(listed.stderr)")
    }
}
