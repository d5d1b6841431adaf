import Foundation
import LatchkeyTestSupport
import Testing

/// An ECDSA SSH key made through latchkeyd on a machine with a TPM is made inside the TPM (the agent's
/// `LATCHKEY_TPM_TCTI`): `ssh-key list` says `origin=made-in-tpm`, and ssh logs in with signatures the TPM makes.
@Suite(.serialized, .dedicatedThreads) struct SSHTPMKeyTests {
    @Test func anECDSAKeyMadeThroughTheAgentLivesInTheTPMAndLogsIn() throws {
        let tpm = try SoftwareTPM()
        let ssh = try SSHSandbox(start: false)
        ssh.agent.agentEnvironment["LATCHKEY_TPM_TCTI"] = tpm.tcti
        try ssh.agent.start()
        try ssh.agent.unlock()
        try waitUntil("the SSH agent socket") { FileManager.default.fileExists(atPath: ssh.socketPath) }
        let latchkeyPath = URL(fileURLWithPath: HelperProcess.product("latchkey")).resolvingSymlinksInPath().path
        #expect(try ssh.agent.cli(["register-application", "--wildcard", latchkeyPath]).status == 0)

        let made = try ssh.agent.cli(["ssh-key", "create", "tpm laptop"])
        #expect(made.status == 0, "\(made.stderr)")
        #expect(made.stdout.hasPrefix("ecdsa-sha2-nistp256 "))
        #expect(ssh.agent.agentLog.contains("made a key held by the agent for pid "))
        let list = try ssh.agent.cli(["ssh-key", "list"])
        #expect(
            list.stdout.hasSuffix(" tpm laptop (ECDSA) origin=made-in-tpm confirm=no programs=any\n"), "\(list.stdout)")
        let stored = try ssh.storedKeys()
        #expect(stored.first?[.keyStorage] == .string("tpm"))

        let line = made.stdout.split(separator: " ").prefix(2).joined(separator: " ")
        try (line + "\n").write(toFile: ssh.directory.file("id_tpm.pub"), atomically: true, encoding: .utf8)
        let server = try SSHServer(in: ssh, authorizedKeys: [line])
        let login = try server.ssh(ssh, identity: ssh.directory.file("id_tpm"))
        #expect(login.stdout == "logged in\n", "\(login.stderr)")

        // Without its TPM the agent cannot sign with it: the login fails, and the key is still there.
        tpm.stop()
        let refused = try server.ssh(ssh, identity: ssh.directory.file("id_tpm"))
        #expect(refused.stdout == "")
        try tpm.start()
        #expect(try ssh.agent.cli(["ssh-key", "list"]).stdout == list.stdout)
        #expect(try server.ssh(ssh, identity: ssh.directory.file("id_tpm")).stdout == "logged in\n")
    }
}
