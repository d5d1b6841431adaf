import Foundation
import LatchkeyTestSupport
import Testing

/// A host the agent is forwarded to cannot delete keys from the keychain: `ssh-add -d` and `-D` run there are
/// refused (`SSH_AGENT_FAILURE`) on any connection that sent `session-bind@openssh.com` — what OpenSSH calls a
/// remote socket —, and so is adding again a key the keychain holds (with `-t 1` it would go a second later);
/// every key stays in the keychain. The same commands on this computer still delete.
@Suite(.serialized, .dedicatedThreads) struct SSHForwardedRemovalTests {
    @Test func aForwardedHostsRemovalsDeleteNothing() throws {
        let ssh = try SSHSandbox()
        let first = try ssh.makeKey("id_first", type: "ecdsa")
        let second = try ssh.makeKey("id_second", type: "ed25519")
        #expect(try ssh.sshAdd(first, second).status == 0)
        let listing = try ssh.sshAdd("-l").stdout
        let server = try SSHServer(in: ssh, authorizedKeys: [try ssh.publicKey(first)])

        let all = try server.ssh(ssh, identity: first, command: "ssh-add -D", extra: ["-A"])
        #expect(all.status == 1, "\(all.stderr)\n\(ssh.agent.agentLog)")
        #expect(all.stderr == "Failed to remove all identities.\n")
        let one = try server.ssh(ssh, identity: first, command: "ssh-add -d '\(second).pub'", extra: ["-A"])
        #expect(one.status == 1)
        #expect(one.stderr == "Could not remove identity \"\(second).pub\": agent refused operation\n")
        // Nor can it make a key go by adding it again with a lifetime (or change it otherwise).
        let again = try server.ssh(ssh, identity: first, command: "ssh-add -t 1 '\(second)'", extra: ["-A"])
        #expect(again.status == 1)
        #expect(again.stderr == "Could not add identity \"\(second)\": agent refused operation\n")
        Thread.sleep(forTimeInterval: 2)
        // The host still sees and uses the keys it may use: they are all there.
        let seen = try server.ssh(ssh, identity: first, command: "ssh-add -l", extra: ["-A"])
        #expect(seen.stdout == listing)
        #expect(try ssh.storedKeys().compactMap { $0[.label]?.stringValue }.sorted() == ["id_first", "id_second"])
        #expect(try ssh.sshAdd("-l").stdout == listing)
        #expect(
            ssh.agent.agentLog.contains(
                "refused to delete SSH keys from the keychain for a connection bound to a session (a forwarded agent)"))

        // On this computer (a connection never bound) the same removals delete.
        #expect(try ssh.sshAdd("-d", second + ".pub").status == 0)
        #expect(try ssh.storedKeys().compactMap { $0[.label]?.stringValue } == ["id_first"])
        #expect(try ssh.sshAdd("-D").stderr == "All identities removed.\n")
        #expect(try ssh.storedKeys().isEmpty)
    }
}
