import Foundation
import LatchkeyTestSupport
import Testing

/// The README's SSH agent session, run by bash as printed: the agent found through `$XDG_RUNTIME_DIR`, keys
/// made, imported and added, listed and set.
@Suite(.serialized, .dedicatedThreads) struct SSHReadmeTests {
    @Test func theReadmesSSHSessionRuns() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let block = try #require(
            readme.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
                .first { $0.contains("latchkey ssh-key create") })
        let sandbox = try AgentSandbox()
        let runtime = sandbox.directory.file("xdg-runtime")
        try FileManager.default.createDirectory(
            atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var environment = sandbox.withPassphrase
        environment["LATCHKEY_AGENT_SOCKET"] = nil
        environment["XDG_RUNTIME_DIR"] = runtime
        let binaries = URL(fileURLWithPath: HelperProcess.product("latchkey")).deletingLastPathComponent().path
        environment["PATH"] = binaries + ":/usr/bin:/bin"
        environment["SSH_ASKPASS_REQUIRE"] = "never"
        let agent = try SpawnedProcess(
            HelperProcess.product("latchkeyd"), ["--verbose"],
            environment: environment.merging(sandbox.agentEnvironment) { $1 }.filter {
                $0.key != "LATCHKEY_PASSPHRASE"
            },
            log: sandbox.directory.file("agent.log"))
        defer { agent.stop() }
        try waitUntil("the SSH agent socket") {
            FileManager.default.fileExists(atPath: runtime + "/latchkey/ssh-agent.sock")
        }
        #expect(
            try HelperProcess.run(binaries + "/latchkey", ["unlock-keychain"], environment: environment).status == 0)
        let ssh = sandbox.directory.file(".ssh")
        try FileManager.default.createDirectory(
            atPath: ssh, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for (type, name) in [("ed25519", "id_ed25519"), ("rsa", "id_rsa")] {
            #expect(
                try HelperProcess.run(
                    "/usr/bin/ssh-keygen", ["-q", "-t", type, "-N", "", "-C", name, "-f", ssh + "/" + name],
                    environment: environment
                ).status == 0)
        }
        let run = try HelperProcess.run("/bin/bash", ["-e", "-c", block], environment: environment)
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)\n\(sandbox.agentLog)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 6, "\(run.stdout)")
        #expect(lines.first?.hasPrefix("ecdsa-sha2-nistp256 ") == true && lines.first?.hasSuffix(" laptop") == true)
        #expect(lines.dropFirst().first?.hasPrefix("imported SHA256:") == true)
        #expect(lines[2].hasSuffix(" laptop (ECDSA) origin=made-in-keychain confirm=no programs=any"))
        #expect(lines[3].hasSuffix(" id_ed25519 (ED25519) origin=imported confirm=no programs=any"))
        #expect(lines[4].hasSuffix(" id_rsa (RSA) origin=imported confirm=yes approval=60s programs=any"))
        #expect(
            lines[5].hasSuffix(" laptop (ECDSA) origin=made-in-keychain confirm=yes approval=60s programs=registered"))
    }
}
