import Foundation
import LatchkeyTestSupport
import Testing

/// The SSH agent's own lock (`ssh-add -x` / `-X`): while locked it lists no key and signs nothing, a wrong
/// passphrase does not unlock it, and the keys are all there after the right one. A locked keychain signs
/// nothing either.
@Suite(.serialized, .dedicatedThreads) struct SSHAgentLockTests {
    func signs(_ ssh: SSHSandbox, _ path: String) throws -> Bool {
        let message = ssh.directory.file("message")
        try "data\n".write(toFile: message, atomically: true, encoding: .utf8)
        try? FileManager.default.removeItem(atPath: message + ".sig")
        return try ssh.run("ssh-keygen", ["-Y", "sign", "-n", "file", "-f", path + ".pub", message]).status == 0
    }

    @Test func aLockedAgentListsAndSignsNothingUntilUnlocked() throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_ecdsa", type: "ecdsa")
        try ssh.sshAdd(path)
        try ssh.hide(path)
        #expect(try signs(ssh, path))
        try ssh.answerAskpass("lock passphrase")
        let locked = try ssh.sshAdd("-x")
        #expect(locked.status == 0)
        #expect(locked.stderr == "Agent locked.\n")
        #expect(try ssh.sshAdd("-l").stdout == "The agent has no identities.\n")
        #expect(try !signs(ssh, path))
        // Locking again fails; so does a wrong passphrase.
        #expect(try ssh.sshAdd("-x").stderr == "Failed to lock agent: agent refused operation\n")
        try ssh.answerAskpass("wrong")
        #expect(try ssh.sshAdd("-X").stderr == "Failed to unlock agent: agent refused operation\n")
        #expect(try !signs(ssh, path))
        try ssh.answerAskpass("lock passphrase")
        #expect(try ssh.sshAdd("-X").stderr == "Agent unlocked.\n")
        #expect(try ssh.sshAdd("-l").stdout == (try ssh.fingerprintLine(path)))
        #expect(try signs(ssh, path))
    }

    @Test func aLockedKeychainSignsNothing() throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_ed25519", type: "ed25519")
        try ssh.sshAdd(path)
        try ssh.hide(path)
        #expect(try ssh.agent.cli("lock-keychain").status == 0)
        #expect(try !signs(ssh, path))
        let wire = try SSHAgentWire(path: ssh.socketPath)
        let blob = Data(base64Encoded: String(try ssh.publicKey(path).split(separator: " ")[1]))!
        #expect(
            wire.exchange(
                [13] + SSHAgentWire.string(Array(blob)) + SSHAgentWire.string("data") + SSHAgentWire.uint32(0)) == [5])
        try ssh.agent.unlock()
        #expect(try signs(ssh, path))
    }
}
