import Foundation
import LatchkeyTestSupport
import Testing

/// `ssh-add -d` and `-D` remove keys from the keychain itself (gpg-agent's SSH support only forgets them
/// until the next start): the key item and its settings go, and a restarted agent does not have them.
@Suite(.serialized, .dedicatedThreads) struct SSHAgentRemovalTests {
    @Test func removingOneKeyDeletesItFromTheKeychain() throws {
        let ssh = try SSHSandbox()
        let first = try ssh.makeKey("id_first", type: "ecdsa")
        let second = try ssh.makeKey("id_second", type: "ed25519")
        try ssh.sshAdd(first, second)
        let removed = try ssh.sshAdd("-d", first + ".pub")
        #expect(removed.status == 0)
        #expect(removed.stderr == "Identity removed: \(first).pub ECDSA (id_first)\n")
        #expect(try ssh.sshAdd("-l").stdout == (try ssh.fingerprintLine(second)))
        #expect(try ssh.storedKeys().compactMap { $0[.label]?.stringValue } == ["id_second"])
        // Removing it again: the agent has no such key.
        let again = try ssh.sshAdd("-d", first + ".pub")
        #expect(again.status == 1)
        #expect(again.stderr == "Could not remove identity \"\(first).pub\": agent refused operation\n")
    }

    @Test func removingAllKeysDeletesThemAllAndARestartBringsNoneBack() throws {
        let ssh = try SSHSandbox()
        for name in ["id_a", "id_b"] { try ssh.sshAdd(try ssh.makeKey(name, type: "ecdsa")) }
        let removed = try ssh.sshAdd("-D")
        #expect(removed.status == 0)
        #expect(removed.stderr == "All identities removed.\n")
        #expect(try ssh.storedKeys().isEmpty)
        ssh.agent.stop()
        try ssh.agent.start()
        try ssh.agent.unlock()
        #expect(try ssh.sshAdd("-l").stdout == "The agent has no identities.\n")
    }

    @Test func aKeyWithALifetimeGoesFromTheKeychainWhenItEnds() throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_brief", type: "ecdsa")
        let added = try ssh.sshAdd("-t", "2", path)
        #expect(added.stderr == "Identity added: \(path) (id_brief)\nLifetime set to 2 seconds\n")
        #expect(try ssh.sshAdd("-l").status == 0)
        try waitUntil("the key's lifetime to end", seconds: 10) { try ssh.storedKeys().isEmpty }
        #expect(try ssh.sshAdd("-l").stdout == "The agent has no identities.\n")
        #expect(ssh.agent.agentLog.contains("removed the SSH key \"id_brief\" from the keychain: its lifetime is over"))
    }
}
