import Foundation
import LatchkeyTestSupport
import Testing

/// Keys added with `ssh-add -c` ask through pinentry before each use: Allow logs in, Deny refuses. The prompt
/// names what is being signed — the user and the host key of a login, "git commit signature" for an SSHSIG
/// signature in git's namespace — and the program asking. One approval covers the same key, process tree
/// and destination for the key's approval time, so a run of logins asks once; any lock ends it.
@Suite(.serialized, .dedicatedThreads) struct SSHConfirmationTests {
    func pinentryLog(_ ssh: SSHSandbox) -> String { ssh.agent.file(ssh.pinentryLog) }
    func prompts(_ ssh: SSHSandbox) -> Int { pinentryLog(ssh).components(separatedBy: "CONFIRM\n").count - 1 }

    @Test func allowLogsInAndDenyRefuses() throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_confirmed", type: "ecdsa")
        let added = try ssh.sshAdd("-c", path)
        #expect(added.stderr == "Identity added: \(path) (id_confirmed)\nThe user must confirm each use of the key\n")
        try ssh.hide(path)
        let server = try SSHServer(in: ssh, authorizedKeys: [try ssh.publicKey(path)])

        try ssh.answerPinentry("cancel")
        let refused = try server.ssh(ssh, identity: path)
        #expect(refused.status == 255)
        #expect(refused.stdout == "")
        #expect(prompts(ssh) == 1)

        try ssh.answerPinentry("confirm")
        let login = try server.ssh(ssh, identity: path)
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout == "logged in\n")

        let fingerprint = String(try ssh.fingerprintLine(path).split(separator: " ")[1])
        let hostFingerprint = String(
            try ssh.run("ssh-keygen", ["-lf", server.directory + "/host_ed25519.pub"]).stdout.split(separator: " ")[1])
        let asked = pinentryLog(ssh)
        #expect(
            asked.contains(
                "SETDESC Allow the SSH key \"id_confirmed\" (\(fingerprint)) for logging in as \(server.user) to the host with key \(hostFingerprint)?\nHost key: \(hostFingerprint)\nConnection: direct from this computer\nAsked by: /usr/bin/ssh (pid "
            ), "\(asked)")
        #expect(asked.contains("SETOK Allow\nSETCANCEL Deny\n"))
    }

    @Test func aGitSignatureIsNamedAsOne() throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_git", type: "ed25519")
        try ssh.sshAdd("-c", path)
        try ssh.hide(path)
        try ssh.answerPinentry("confirm")
        let message = ssh.directory.file("commit")
        try "tree 0\n".write(toFile: message, atomically: true, encoding: .utf8)
        let sign = ["-Y", "sign", "-n", "git", "-f", path + ".pub", message]
        let job = try ssh.job()
        let signed = try job.run("/usr/bin/ssh-keygen", sign)
        #expect(signed.status == 0, "\(signed.stderr)")
        let fingerprint = String(try ssh.fingerprintLine(path).split(separator: " ")[1])
        #expect(
            pinentryLog(ssh).contains(
                "SETDESC Allow the SSH key \"id_git\" (\(fingerprint)) for a git commit signature?\nAsked by: /usr/bin/ssh-keygen (pid "
            ))
        try ssh.answerPinentry("cancel")
        try FileManager.default.removeItem(atPath: message + ".sig")
        // The same job signs again: the approval covers it.
        #expect(try job.run("/usr/bin/ssh-keygen", sign).status == 0)
        #expect(prompts(ssh) == 1)
        try FileManager.default.removeItem(atPath: message + ".sig")
        // A program of another process tree is asked (and refused).
        #expect(try ssh.run("ssh-keygen", sign).status != 0)
        #expect(prompts(ssh) == 2)
        // A lock ends the approval: the same job is asked again.
        #expect(try ssh.agent.cli("lock-keychain").status == 0)
        try ssh.agent.unlock()
        #expect(try job.run("/usr/bin/ssh-keygen", sign).status != 0)
        #expect(prompts(ssh) == 3)
    }

    @Test func oneApprovalCoversARunOfLoginsUntilALock() throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_batch", type: "ecdsa")
        try ssh.sshAdd("-c", path)
        try ssh.hide(path)
        let server = try SSHServer(in: ssh, authorizedKeys: [try ssh.publicKey(path)])
        try ssh.answerPinentry("confirm")
        let job = try ssh.job()
        for _ in 0..<5 {
            let login = try server.ssh(in: job, identity: path)
            #expect(login.status == 0, "\(login.stderr)")
        }
        #expect(prompts(ssh) == 1)
        // Another destination (another server) asks again.
        let second = try SSHServer(in: ssh, authorizedKeys: [try ssh.publicKey(path)], name: "sshd-2")
        #expect(try second.ssh(in: job, identity: path).status == 0)
        #expect(prompts(ssh) == 2)
        // Another process tree asks again for the same destination.
        try ssh.answerPinentry("cancel")
        #expect(try server.ssh(ssh, identity: path).status == 255)
        #expect(prompts(ssh) == 3)
        // The SSH agent's lock ends every approval: the job's next login asks.
        try ssh.answerAskpass("lock")
        #expect(try ssh.sshAdd("-x").status == 0)
        #expect(try ssh.sshAdd("-X").status == 0)
        #expect(try server.ssh(in: job, identity: path).status == 255)
        #expect(prompts(ssh) == 4)
    }

    @Test func aTreeWideApprovalCoversEveryDestination() throws {
        let ssh = try SSHSandbox()
        let made = try ssh.agent.cli("ssh-key", "create", "fleet", "--confirm", "yes", "--approval-scope", "tree")
        #expect(made.status == 0, "\(made.stderr)")
        let line = made.stdout.split(separator: " ").prefix(2).joined(separator: " ")
        let identity = ssh.directory.file("id_fleet")
        try (line + "\n").write(toFile: identity + ".pub", atomically: true, encoding: .utf8)
        #expect(
            try ssh.agent.cli("ssh-key", "list").stdout.hasSuffix(
                " fleet (ECDSA) origin=made-in-keychain confirm=yes approval=60s approval-scope=tree programs=any\n"))
        let servers = try (0..<3).map { try SSHServer(in: ssh, authorizedKeys: [line], name: "sshd-\($0)") }
        try ssh.answerPinentry("confirm")
        let job = try ssh.job()
        for server in servers {
            #expect(try server.ssh(in: job, identity: identity).stdout == "logged in\n")
        }
        #expect(prompts(ssh) == 1)
        #expect(
            pinentryLog(ssh).contains(
                "Allowing covers this program's further uses of this key for any destination for 60 seconds"))
    }

    @Test func anApprovalEndsWhenItsTimeIsUp() throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_brief", type: "ecdsa")
        try ssh.sshAdd("-c", path)
        try ssh.hide(path)
        let set = try ssh.agent.cli("ssh-key", "set", "id_brief", "--approval-seconds", "1")
        #expect(set.status == 0, "\(set.stderr)")
        let server = try SSHServer(in: ssh, authorizedKeys: [try ssh.publicKey(path)])
        try ssh.answerPinentry("confirm")
        let job = try ssh.job()
        #expect(try server.ssh(in: job, identity: path).status == 0)
        #expect(prompts(ssh) == 1)
        #expect(
            pinentryLog(ssh).contains(
                "Allowing covers this program's further uses of this key for the same destination for 1 second, until the keychain or the agent locks."
            ))
        // Past its second the approval covers nothing: the same job, the same destination, asked again.
        Thread.sleep(forTimeInterval: 1.5)
        #expect(try server.ssh(in: job, identity: path).status == 0)
        #expect(prompts(ssh) == 2)
    }

    @Test func aForwardedLoginNamesTheHostItCameThrough() throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_hop", type: "ecdsa")
        try ssh.sshAdd("-c", path)
        try ssh.hide(path)
        let key = try ssh.publicKey(path)
        let first = try SSHServer(in: ssh, authorizedKeys: [key], name: "sshd-1")
        let second = try SSHServer(in: ssh, authorizedKeys: [key], name: "sshd-2")
        try ssh.answerPinentry("confirm")
        // Logged in to the first server with the agent forwarded (-A), the session there logs in to the second
        // through the forwarded agent: the agent sees the first host's binding, then the second's.
        let hop = second.commandLine(identity: path)
        let login = try first.ssh(ssh, identity: path, command: hop, extra: ["-A"])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout == "logged in\n")
        #expect(prompts(ssh) == 2)
        func fingerprint(_ server: SSHServer) throws -> String {
            String(
                try ssh.run("ssh-keygen", ["-lf", server.directory + "/host_ed25519.pub"]).stdout.split(separator: " ")[
                    1])
        }
        let asked = pinentryLog(ssh)
        #expect(
            asked.contains(
                "to the host with key \(try fingerprint(first))?\nHost key: \(try fingerprint(first))\nConnection: direct from this computer\n"
            ), "\(asked)")
        #expect(
            asked.contains(
                "to the host with key \(try fingerprint(second))?\nHost key: \(try fingerprint(second))\nForwarded through: \(try fingerprint(first))\n"
            ), "\(asked)")
    }

    @Test func withoutPinentryAConfirmedKeyIsNeverUsed() throws {
        let ssh = try SSHSandbox(start: false)
        ssh.agent.agentEnvironment["LATCHKEY_PINENTRY"] = ssh.directory.file("no-pinentry")
        try ssh.agent.start()
        try ssh.agent.unlock()
        try waitUntil("the SSH agent socket") { FileManager.default.fileExists(atPath: ssh.socketPath) }
        let path = try ssh.makeKey("id_confirmed", type: "ecdsa")
        try ssh.sshAdd("-c", path)
        try ssh.hide(path)
        let message = ssh.directory.file("file")
        try "x\n".write(toFile: message, atomically: true, encoding: .utf8)
        #expect(try ssh.run("ssh-keygen", ["-Y", "sign", "-n", "file", "-f", path + ".pub", message]).status != 0)
        #expect(ssh.agent.agentLog.contains("pinentry \(ssh.directory.file("no-pinentry")) cannot be started"))
    }
}
