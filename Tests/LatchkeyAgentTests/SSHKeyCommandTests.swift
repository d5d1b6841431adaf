import Foundation
import LatchkeyTestSupport
import Testing

/// `latchkey ssh-key`: keys made in the keychain (never handed out, as kSecAttrTokenIDSecureEnclave keys are —
/// inside latchkeyd when it serves the command), OpenSSH key files imported (encrypted ones too), listed,
/// printed, deleted, and what each use needs: which programs, and whether it asks.
@Suite(.serialized, .dedicatedThreads) struct SSHKeyCommandTests {
    func latchkey(_ ssh: SSHSandbox, _ arguments: String...) throws -> HelperProcess.Output {
        try ssh.agent.cli(arguments)
    }

    @Test func aKeyMadeInTheKeychainLogsInAndIsNeverHandedOut() throws {
        let ssh = try SSHSandbox()
        let made = try latchkey(ssh, "ssh-key", "create", "work laptop")
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.hasPrefix("ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABB"))
        #expect(made.stdout.hasSuffix(" work laptop\n"))
        #expect(try ssh.sshAdd("-L").stdout == made.stdout)
        let line = made.stdout.split(separator: " ").prefix(2).joined(separator: " ")
        try (line + "\n").write(toFile: ssh.directory.file("id_work.pub"), atomically: true, encoding: .utf8)
        let fingerprint = try ssh.fingerprintLine(ssh.directory.file("id_work")).split(separator: " ")[1]
        #expect(
            try latchkey(ssh, "ssh-key", "list").stdout
                == "256 \(fingerprint) work laptop (ECDSA) origin=made-in-keychain confirm=no programs=any\n")
        #expect(try latchkey(ssh, "ssh-key", "public", "work laptop").stdout == made.stdout)
        #expect(try latchkey(ssh, "ssh-key", "public", String(fingerprint)).stdout == made.stdout)
        let stored = try ssh.storedKeys()
        #expect(stored.count == 1)
        #expect(stored.first?[.tokenID] == .string("com.apple.setoken"))
        #expect(stored.first?["extr"] == .number(0))

        let server = try SSHServer(in: ssh, authorizedKeys: [line])
        let login = try server.ssh(ssh, identity: ssh.directory.file("id_work"))
        #expect(login.stdout == "logged in\n", "\(login.stderr)")

        let deleted = try latchkey(ssh, "ssh-key", "delete", "work laptop")
        #expect(deleted.status == 0)
        #expect(deleted.stderr == "deleted the SSH key \(fingerprint) (work laptop)\n")
        #expect(try ssh.sshAdd("-l").stdout == "The agent has no identities.\n")
        let missing = try latchkey(ssh, "ssh-key", "public", "work laptop")
        #expect(missing.status == 44)
        #expect(
            missing.stderr
                == "latchkey: ssh-key: The specified item could not be found in the keychain. (no SSH key named work laptop)\n"
        )
    }

    @Test func throughTheAgentTheKeyIsMadeInsideIt() throws {
        let ssh = try SSHSandbox()
        let latchkeyPath = URL(fileURLWithPath: HelperProcess.product("latchkey")).resolvingSymlinksInPath().path
        #expect(try latchkey(ssh, "register-application", "--wildcard", latchkeyPath).status == 0)
        let made = try latchkey(ssh, "ssh-key", "create", "-t", "ed25519", "agent-made")
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.hasPrefix("ssh-ed25519 "))
        #expect(ssh.agent.agentLog.contains("made a key held by the agent for pid "))
        #expect(try ssh.sshAdd("-L").stdout == made.stdout)
    }

    @Test func anEncryptedKeyFileIsImportedAndTheFileCanGo() throws {
        let ssh = try SSHSandbox()
        let path = ssh.directory.file("id_file")
        #expect(
            try ssh.run(
                "ssh-keygen",
                ["-q", "-t", "ed25519", "-a", "4", "-N", "file passphrase", "-C", "from a file", "-f", path]
            ).status == 0)
        try "wrong\n".write(toFile: ssh.directory.file("wrong"), atomically: true, encoding: .utf8)
        try "file passphrase\n".write(toFile: ssh.directory.file("right"), atomically: true, encoding: .utf8)
        for name in ["wrong", "right"] { chmod(ssh.directory.file(name), 0o600) }
        let refused = try latchkey(ssh, "ssh-key", "import", path, "--key-passphrase-file", ssh.directory.file("wrong"))
        #expect(refused.status == 51)
        #expect(
            refused.stderr
                == "latchkey: ssh-key: The user name or passphrase you entered is not correct. (\(path): the passphrase does not open the key file)\n"
        )
        let imported = try latchkey(
            ssh, "ssh-key", "import", path, "--key-passphrase-file", ssh.directory.file("right"), "--confirm", "yes")
        #expect(imported.status == 0, "\(imported.stderr)")
        let fingerprint = try ssh.fingerprintLine(path).split(separator: " ")[1]
        #expect(imported.stdout == "imported \(fingerprint) from a file\n")
        try FileManager.default.removeItem(atPath: path)
        #expect(
            try latchkey(ssh, "ssh-key", "list").stdout
                == "256 \(fingerprint) from a file (ED25519) origin=imported confirm=yes approval=60s programs=any\n")
        let server = try SSHServer(in: ssh, authorizedKeys: [try ssh.publicKey(path)])
        try ssh.answerPinentry("confirm")
        #expect(try server.ssh(ssh, identity: path).stdout == "logged in\n")
        // Importing it again updates, never duplicates.
        let unencrypted = ssh.directory.file("id_plain")
        try ssh.sshAdd(try ssh.makeKey("id_plain", type: "ecdsa"))
        #expect(try latchkey(ssh, "ssh-key", "import", unencrypted).stdout.hasPrefix("updated SHA256:"))
        #expect(try ssh.storedKeys().count == 2)
    }

    @Test func whichProgramsMayUseAKey() throws {
        let ssh = try SSHSandbox()
        #expect(try latchkey(ssh, "ssh-key", "create", "restricted").status == 0)
        let set = try latchkey(ssh, "ssh-key", "set", "restricted", "--programs", "registered")
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.hasSuffix(" restricted (ECDSA) origin=made-in-keychain confirm=no programs=registered\n"))
        // ssh-add is no registered program: the key is not there for it.
        #expect(try ssh.sshAdd("-l").stdout == "The agent has no identities.\n")
        #expect(
            try latchkey(ssh, "register-application", "--app-id", "org.openssh.ssh-add", "/usr/bin/ssh-add").status == 0
        )
        #expect(try ssh.sshAdd("-l").stdout.hasSuffix(" restricted (ECDSA)\n"))
        // Only the named application identifiers.
        #expect(try latchkey(ssh, "ssh-key", "set", "restricted", "--programs", "org.example.other").status == 0)
        #expect(try ssh.sshAdd("-l").stdout == "The agent has no identities.\n")
        #expect(
            try latchkey(ssh, "ssh-key", "set", "restricted", "--programs", "org.example.other,org.openssh.ssh-add")
                .status == 0)
        #expect(try ssh.sshAdd("-l").status == 0)
        // ssh-add -D removes only what the program may use.
        #expect(try latchkey(ssh, "ssh-key", "create", "another").status == 0)
        #expect(try latchkey(ssh, "ssh-key", "set", "another", "--programs", "registered").status == 0)
        #expect(try latchkey(ssh, "unregister-application", "/usr/bin/ssh-add").status == 0)
        #expect(try ssh.sshAdd("-D").status == 0)
        #expect(try ssh.storedKeys().count == 2)
    }

    @Test func usageErrorsExit64() throws {
        let ssh = try SSHSandbox()
        for words in [
            ["ssh-key"], ["ssh-key", "frobnicate"], ["ssh-key", "create"], ["ssh-key", "list", "extra"],
            ["ssh-key", "create", "k", "-t", "dsa"], ["ssh-key", "create", "k", "--confirm", "maybe"],
            ["ssh-key", "create", "k", "--approval-seconds", "-1"],
        ] {
            let run = try ssh.agent.cli(words)
            #expect(run.status == 64, "\(words): \(run.stderr)")
            #expect(
                run.stderr.hasSuffix(
                    "Usage: latchkey ssh-key create|import|list|public|delete|set [name|file] [options]\n"),
                "\(words): \(run.stderr)")
        }
    }
}
