import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Socket activation as systemd does it (LISTEN_PID, LISTEN_FDS, the socket as fd 3), driven by
/// `systemd-socket-activate` when it is installed.
@Suite(.serialized, .dedicatedThreads) struct SocketActivationTests {
    static let activator = "/usr/bin/systemd-socket-activate"

    // `script/bootstrap --test` installs systemd, which brings it.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: activator), "systemd-socket-activate is not installed"))
    func theAgentServesTheSocketItIsGiven() throws {
        let activator = Self.activator
        let sandbox = try AgentSandbox()
        try sandbox.start(
            activator,
            [
                "-l", sandbox.socketPath, "-E", "LATCHKEY_KEYCHAIN=\(sandbox.keychainPath)",
                HelperProcess.product("latchkeyd"), "--verbose",
            ])
        // The first connection starts latchkeyd on the inherited socket.
        try sandbox.unlock()
        try sandbox.registerClients()
        #expect(
            try sandbox.client("a", "status") == "unlocked registered latchkey-test-client-a latchkey-test-client-a\n")
        #expect(try sandbox.client("a", "set", "s", "k", "activated") == "ok\n")
        #expect(try sandbox.client("a", "get", "s", "k") == "activated\n")
        #expect(sandbox.agentLog.contains("listening on the socket systemd passed"))
    }

    /// contrib/systemd/latchkeyd.socket lists the SSH agent's socket second: a connection to it starts the
    /// agent too, and ssh-add is served on it.
    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: activator), "systemd-socket-activate is not installed"))
    func theSSHAgentServesTheSecondSocket() throws {
        let sandbox = try AgentSandbox()
        let sshSocket = sandbox.directory.file("run/ssh-agent.sock")
        try sandbox.start(
            Self.activator,
            [
                "-l", sandbox.socketPath, "-l", sshSocket, "-E", "LATCHKEY_KEYCHAIN=\(sandbox.keychainPath)",
                HelperProcess.product("latchkeyd"), "--verbose",
            ])
        try sandbox.unlock()
        let environment = ["PATH": "/usr/bin:/bin", "HOME": sandbox.directory.path, "SSH_AUTH_SOCK": sshSocket]
        let listed = try HelperProcess.run("/usr/bin/ssh-add", ["-l"], environment: environment)
        #expect(listed.stdout == "The agent has no identities.\n", "\(listed.stderr)\n\(sandbox.agentLog)")
        #expect(sandbox.agentLog.contains("SSH agent listening on the second socket systemd passed"))
    }
}
