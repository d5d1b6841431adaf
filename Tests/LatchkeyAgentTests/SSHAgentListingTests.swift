import Foundation
import LatchkeyTestSupport
import Testing

/// `ssh-add` against latchkeyd's SSH agent socket: keys of every kind OpenSSH makes (ECDSA P-256, P-384,
/// P-521, RSA, Ed25519) are stored in the keychain, listed with `-l` and `-L` exactly as OpenSSH's own agent
/// lists them, and still there after the agent restarts.
@Suite(.serialized, .dedicatedThreads) struct SSHAgentListingTests {
    static let kinds: [(name: String, type: String, bits: Int?)] = [
        ("id_p256", "ecdsa", 256), ("id_p384", "ecdsa", 384), ("id_p521", "ecdsa", 521), ("id_rsa", "rsa", 2048),
        ("id_ed25519", "ed25519", nil),
    ]

    @Test func anEmptyAgentSaysSo() throws {
        let ssh = try SSHSandbox()
        let listed = try ssh.sshAdd("-l")
        #expect(listed.status == 1)
        #expect(listed.stdout == "The agent has no identities.\n")
        #expect(try ssh.sshAdd("-L").stdout == "The agent has no identities.\n")
    }

    @Test func theAgentSaysWhereToPointSSHAuthSock() throws {
        let ssh = try SSHSandbox()
        // The log line an operator reads (journalctl --user -u latchkeyd) names the socket and the variable.
        #expect(
            ssh.agent.agentLog.contains("SSH agent listening on \(ssh.socketPath) (SSH_AUTH_SOCK=\(ssh.socketPath))\n"))
        let help = try HelperProcess.run(
            HelperProcess.product("latchkeyd"), ["--help"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("export SSH_AUTH_SOCK=\"$XDG_RUNTIME_DIR/latchkey/ssh-agent.sock\""))
    }

    @Test func everyKindIsStoredAndListedAsOpenSSHListsIt() throws {
        let ssh = try SSHSandbox()
        var fingerprints = ""
        var lines = ""
        for kind in Self.kinds {
            let path = try ssh.makeKey(kind.name, type: kind.type, bits: kind.bits)
            let added = try ssh.sshAdd(path)
            #expect(added.status == 0, "\(added.stderr)")
            #expect(added.stderr == "Identity added: \(path) (\(kind.name))\n")
            fingerprints += try ssh.fingerprintLine(path)
            lines += try ssh.publicKey(path) + " \(kind.name)\n"
        }
        #expect(try ssh.sshAdd("-l").stdout == fingerprints)
        #expect(try ssh.sshAdd("-L").stdout == lines)
        // In the keychain, as keys it holds: labelled with their comments, never extractable.
        let stored = try ssh.storedKeys()
        #expect(Set(stored.compactMap { $0[.label]?.stringValue }) == Set(Self.kinds.map(\.name)))
        #expect(stored.allSatisfy { $0["extr"] == .number(0) && $0[.tokenID] == .string("com.latchkey.agent") })

        // The agent forgets nothing when it restarts: the keys are the keychain's.
        ssh.agent.stop()
        try ssh.agent.start()
        try ssh.agent.unlock()
        #expect(try ssh.sshAdd("-l").stdout == fingerprints)
    }

    @Test func aKeyAddedAgainTakesItsNewCommentAndStaysOneKey() throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_ecdsa", type: "ecdsa")
        try ssh.sshAdd(path)
        let renamed = try ssh.run("ssh-keygen", ["-q", "-c", "-C", "renamed", "-f", path])
        #expect(renamed.status == 0, "\(renamed.stderr)")
        #expect(try ssh.sshAdd(path).stderr == "Identity added: \(path) (renamed)\n")
        #expect(try ssh.sshAdd("-L").stdout == (try ssh.publicKey(path)) + " renamed\n")
        #expect(try ssh.storedKeys().count == 1)
    }

    @Test func aLockedKeychainListsNothing() throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_ed25519", type: "ed25519")
        try ssh.sshAdd(path)
        #expect(try ssh.agent.cli("lock-keychain").status == 0)
        let listed = try ssh.sshAdd("-l")
        #expect(listed.status == 1)
        #expect(listed.stdout == "The agent has no identities.\n")
        // Nor is a key stored while locked.
        let other = try ssh.makeKey("id_other", type: "ecdsa")
        let refused = try ssh.sshAdd(other)
        #expect(refused.status == 1)
        #expect(refused.stderr == "Could not add identity \"\(other)\": agent refused operation\n")
        try ssh.agent.unlock()
        #expect(try ssh.sshAdd("-l").stdout == (try ssh.fingerprintLine(path)))
    }
}
