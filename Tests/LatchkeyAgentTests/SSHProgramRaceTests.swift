import Foundation
import LatchkeyTestSupport
import Testing

/// The third review's attack on `--programs registered` SSH keys (issue 50, point 3): a request written by an
/// unregistered program before it execs a registered one carries the pid the registered program then runs as.
/// A key open only to registered programs signs only for a request on a connection the program running now
/// holds as a close-on-exec descriptor.
@Suite(.serialized, .dedicatedThreads) struct SSHProgramRaceTests {
    /// The public key blob of the keychain's key `label`, from `ssh-add -L` (run as a registered program).
    static func blob(_ ssh: SSHSandbox, comment: String) throws -> String {
        let listed = try ssh.sshAdd("-L")
        let line = try #require(listed.stdout.split(separator: "\n").first { $0.hasSuffix(" " + comment) })
        let base64 = String(line.split(separator: " ")[1])
        let bytes = try #require(Data(base64Encoded: base64))
        return bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// The agent stopped from before the connection until the exec is done, so it identifies the peer only
    /// when the registered program runs; the socket either closes at the exec (only the child holds it) or
    /// is kept open across it. Neither gets a signature; ssh, asking on its own connection, does.
    @Test(arguments: ["close-on-exec", "inherited"], ["stopped", "running"])
    func aRequestWrittenBeforeAnExecIsNotTheRegisteredPrograms(_ kind: String, _ mode: String) throws {
        let ssh = try SSHSandbox()
        #expect(try ssh.agent.cli(["ssh-key", "create", "restricted"]).status == 0)
        #expect(try ssh.agent.cli(["ssh-key", "set", "restricted", "--programs", "registered"]).status == 0)
        for program in ["ssh", "ssh-add"] {
            let registered = try ssh.agent.cli([
                "register-application", "--app-id", "org.openssh." + program, "/usr/bin/" + program,
            ])
            #expect(registered.status == 0, "\(registered.stderr)")
        }
        let blob = try Self.blob(ssh, comment: "restricted")
        let agent = try #require(ssh.agent.agent?.pid)
        let target = [
            "/usr/bin/ssh", "-o", "ProxyCommand=sleep 5 2>/dev/null", "-o", "BatchMode=yes", "unreachable.invalid",
        ]
        for round in 0..<5 {
            let result = ssh.directory.file("race-\(kind)-\(mode)-\(round)")
            let attack = try ssh.run(
                "python3",
                [
                    AgentHardeningTests.tools + "/ssh-exec-race.py", result, ssh.socketPath, String(agent), mode, kind,
                    blob,
                ]
                    + target)
            try waitUntil("the attacker's result: \(attack.stderr)") { FileManager.default.fileExists(atPath: result) }
            let outcome = try String(contentsOfFile: result, encoding: .utf8)
            // Refused (SSH_AGENT_FAILURE), or — running, when the agent had identified the unregistered program
            // before the exec — not answered at all: the connection closed.
            let refusals = mode == "stopped" ? ["failure\n"] : ["failure\n", "closed\n"]
            #expect(refusals.contains(outcome), "round \(round): \(outcome)\n\(ssh.agent.agentLog)")
        }
        // Stopped, the agent looks only after the exec: the hold check is what refuses. (Running, it usually
        // reads the request while the unregistered program still runs.)
        let log = ssh.agent.agentLog
        #expect(
            mode == "running"
                || log.contains(
                    "does not hold this connection: another process (one that forked before it ran this program) wrote on it"
                )
                || log.contains("holds this connection without close-on-exec"),
            "\(log)")
        // The registered program's own request is served: ssh-add (registered) lists the key.
        #expect(try ssh.sshAdd("-l").stdout.hasSuffix(" restricted (ECDSA)\n"))
    }
}
