import Foundation
import LatchkeyTestSupport
import Testing

/// `ssh-add -h` destination constraints (OpenSSH's restrict-destination-v00): a key restricted to a host signs
/// logins to that host only — as the user the constraint names, on the session the connection was bound to —
/// and nothing else; the constraints are stored with the key, so they hold after the agent restarts.
@Suite(.serialized, .dedicatedThreads) struct SSHDestinationConstraintTests {
    /// Two servers that both accept the key, a known_hosts naming them `host-a` and `host-b`, and the key.
    func setUp(_ ssh: SSHSandbox) throws -> (key: String, a: SSHServer, b: SSHServer, knownHosts: String) {
        let key = try ssh.makeKey("id_restricted", type: "ed25519")
        let a = try SSHServer(in: ssh, authorizedKeys: [try ssh.publicKey(key)], name: "sshd-a")
        let b = try SSHServer(in: ssh, authorizedKeys: [try ssh.publicKey(key)], name: "sshd-b")
        let knownHosts = ssh.directory.file("known_hosts")
        try "host-a \(a.hostKey)\nhost-b \(b.hostKey)\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)
        return (key, a, b, knownHosts)
    }

    func login(
        _ ssh: SSHSandbox, _ server: SSHServer, as alias: String, key: String, knownHosts: String, user: String? = nil
    )
        throws -> HelperProcess.Output
    {
        try ssh.run(
            "ssh",
            [
                "-F", "/dev/null", "-o", "IdentityFile=\(key).pub", "-o", "IdentitiesOnly=yes", "-o", "BatchMode=yes",
                "-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=\(knownHosts)", "-o",
                "HostKeyAlias=\(alias)",
                "-p", String(server.port), "\(user ?? server.user)@127.0.0.1", "echo logged in",
            ])
    }

    @Test func aKeyRestrictedToAHostLogsInThereOnly() throws {
        let ssh = try SSHSandbox()
        let (key, a, b, knownHosts) = try setUp(ssh)
        let added = try ssh.sshAdd("-h", "host-a", "-H", knownHosts, key)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stderr == "Identity added: \(key) (id_restricted)\n", "\(added.stderr)")
        try ssh.hide(key)
        #expect(try login(ssh, a, as: "host-a", key: key, knownHosts: knownHosts).stdout == "logged in\n")
        #expect(try login(ssh, b, as: "host-b", key: key, knownHosts: knownHosts).status == 255)
        // On a connection bound to host-b the agent does not even list the key (ssh may still offer the public
        // key of its file, but it has nothing to sign with).
        #expect(!b.log.contains("Accepted publickey"))
        // Listed locally (a connection never bound is this machine's own use) …
        #expect(try ssh.sshAdd("-l").status == 0)
        // … but it signs nothing that is not a login.
        let file = ssh.directory.file("file")
        try "x\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try ssh.run("ssh-keygen", ["-Y", "sign", "-n", "file", "-f", key + ".pub", file]).status != 0)

        // Stored with the key: a restarted agent keeps to it.
        ssh.agent.stop()
        try ssh.agent.start()
        try ssh.agent.unlock()
        #expect(try login(ssh, b, as: "host-b", key: key, knownHosts: knownHosts).status == 255)
        #expect(try login(ssh, a, as: "host-a", key: key, knownHosts: knownHosts).stdout == "logged in\n")
    }

    @Test func theConstraintsUserMustMatch() throws {
        let ssh = try SSHSandbox()
        let (key, a, _, knownHosts) = try setUp(ssh)
        #expect(try ssh.sshAdd("-h", "someone-else@host-a", "-H", knownHosts, key).status == 0)
        try ssh.hide(key)
        #expect(try login(ssh, a, as: "host-a", key: key, knownHosts: knownHosts).status == 255)
        try FileManager.default.moveItem(atPath: key + ".hidden", toPath: key)
        #expect(try ssh.sshAdd("-h", "\(a.user.prefix(1))*@host-a", "-H", knownHosts, key).status == 0)  // A pattern.
        try ssh.hide(key)
        #expect(try login(ssh, a, as: "host-a", key: key, knownHosts: knownHosts).stdout == "logged in\n")
    }

    @Test func thePromptNamesTheHostTheConstraintNames() throws {
        let ssh = try SSHSandbox()
        let (key, a, _, knownHosts) = try setUp(ssh)
        #expect(try ssh.sshAdd("-c", "-h", "host-a", "-H", knownHosts, key).status == 0)
        try ssh.hide(key)
        try ssh.answerPinentry("confirm")
        #expect(try login(ssh, a, as: "host-a", key: key, knownHosts: knownHosts).stdout == "logged in\n")
        #expect(ssh.agent.file(ssh.pinentryLog).contains("for logging in as \(a.user)@host-a?\nHost key: SHA256:"))
    }

    @Test func aBindingTheHostDidNotSignIsRefused() throws {
        let ssh = try SSHSandbox()
        let (key, _, _, knownHosts) = try setUp(ssh)
        #expect(try ssh.sshAdd("-h", "host-a", "-H", knownHosts, key).status == 0)
        let firstLine = try String(contentsOfFile: knownHosts, encoding: .utf8).split(separator: "\n")[0]
        let hostBlob = Array(try #require(Data(base64Encoded: String(firstLine.split(separator: " ")[2]))))
        let wire = try SSHAgentWire(path: ssh.socketPath)
        let forged =
            [27] + SSHAgentWire.string("session-bind@openssh.com") + SSHAgentWire.string(hostBlob)
            + SSHAgentWire.string([UInt8](repeating: 7, count: 32))
            + SSHAgentWire.string(
                SSHAgentWire.string("ssh-ed25519") + SSHAgentWire.string([UInt8](repeating: 0, count: 64))) + [0]
        #expect(wire.exchange(forged) == [28])  // SSH_AGENT_EXTENSION_FAILURE.
        // After a failed binding the connection shows no constrained key.
        #expect(SSHAgentWire.identities(wire.exchange([11]) ?? [])?.count == 0)
        #expect(ssh.agent.agentLog.contains("refused a session binding whose signature is not the host key's"))
    }
}
