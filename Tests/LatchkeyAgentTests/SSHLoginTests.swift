import Foundation
import LatchkeyTestSupport
import Testing

/// `ssh` logs in to an `sshd` (Debian's, on 127.0.0.1, with a throwaway configuration) with a key only the
/// agent holds — its private key file is gone — and the agent records the session binding ssh sends.
@Suite(.serialized, .dedicatedThreads) struct SSHLoginTests {
    @Test(arguments: [("ecdsa", 256), ("rsa", 3072), ("ed25519", 0)])
    func sshLogsInWithAKeyOnlyTheAgentHolds(type: String, bits: Int) throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_\(type)", type: type, bits: bits == 0 ? nil : bits)
        try ssh.sshAdd(path)
        try ssh.hide(path)
        let server = try SSHServer(in: ssh, authorizedKeys: [try ssh.publicKey(path)])
        let login = try server.ssh(ssh, identity: path, command: "echo logged in as $(id -un)")
        #expect(login.status == 0, "\(login.stderr)\n\(server.log)\n\(ssh.agent.agentLog)")
        #expect(login.stdout == "logged in as \(server.user)\n")
        let fingerprint = try ssh.fingerprintLine(path).split(separator: " ")[1]
        #expect(server.log.contains("Accepted publickey for \(server.user) from 127.0.0.1"))
        #expect(server.log.contains(String(fingerprint)))
        // ssh bound the connection to the session, with the server's host key.
        let hostFingerprint = try ssh.run("ssh-keygen", ["-lf", server.directory + "/host_ed25519.pub"]).stdout.split(
            separator: " ")[1]
        #expect(ssh.agent.agentLog.contains("(ssh): bound to a session with host key \(hostFingerprint)\n"))
    }

    @Test func aKeyTheServerDoesNotKnowIsRefused() throws {
        let ssh = try SSHSandbox()
        let path = try ssh.makeKey("id_ecdsa", type: "ecdsa")
        let other = try ssh.makeKey("id_other", type: "ecdsa")
        try ssh.sshAdd(path)
        let server = try SSHServer(in: ssh, authorizedKeys: [try ssh.publicKey(other)])
        let login = try server.ssh(ssh, identity: path)
        #expect(login.status == 255)
        #expect(login.stderr.hasSuffix("Permission denied (publickey).\r\n"), "\(login.stderr)")
    }
}
