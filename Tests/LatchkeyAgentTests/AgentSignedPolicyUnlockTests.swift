import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

/// `latchkeyd --unlock-unattended` on a keychain sealed under signed PCR policies (`tpm enroll --unattended
/// --policy-key`): after an update whose PCR value was signed ahead, the agent still opens it at start.
@Suite(.serialized, .dedicatedThreads) struct AgentSignedPolicyUnlockTests {
    static let measurement = Data((0..<32).map { UInt8($0) })

    @Test func theAgentOpensTheKeychainAfterASignedUpdate() throws {
        let tpm = try SoftwareTPM()
        let sandbox = try AgentSandbox()
        sandbox.agentEnvironment["LATCHKEY_TPM_TCTI"] = tpm.tcti
        var environment = sandbox.withPassphrase
        environment["LATCHKEY_TPM_TCTI"] = tpm.tcti
        let latchkey = HelperProcess.product("latchkey")
        let key = sandbox.directory.file("policy.pem")
        let publicKey = sandbox.directory.file("policy.pub.pem")
        for arguments in [
            ["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key],
            ["ec", "-in", key, "-pubout", "-out", publicKey],
        ] {
            #expect(try HelperProcess.run("/usr/bin/openssl", arguments).status == 0)
        }
        let steps: [[String]] = [
            ["add-generic-password", "-s", "mail", "-a", "alice", "-w", "hunter2"],
            ["tpm", "enroll", "--unattended", "--pcrs", "23", "--policy-key", publicKey],
            // PCR 23 after the update: SHA-256(0³² ‖ measurement), signed before it is measured.
            [
                "tpm", "sign-policy", "--key", key, "--pcrs", "23", "--pcr",
                "23=" + Hex.encode(MessageDigest.sha256.hash(Data(repeating: 0, count: 32) + Self.measurement)),
                "--output", sandbox.directory.file("next.json"),
            ],
            ["tpm", "add-policy", sandbox.directory.file("next.json")],
        ]
        for step in steps {
            let output = try HelperProcess.run(latchkey, step, environment: environment)
            #expect(output.status == 0, "\(step): \(output.stderr)")
        }
        try tpm.extendPCR(23, with: Self.measurement)
        try sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose", "--unlock-unattended"])
        let info = try HelperProcess.run(latchkey, ["show-keychain-info"], environment: sandbox.environment).stdout
        #expect(info.contains("agent: running (pid \(sandbox.agent?.pid ?? 0)), unlocked\n"), "\(info)")
        #expect(sandbox.agentLog.contains("latchkeyd: unlocked through the TPM (unattended)\n"), "\(sandbox.agentLog)")

        // Locked again, `unlock-keychain --unattended` has the running agent unseal it (the client has no TPM).
        #expect(try sandbox.cli("lock-keychain").status == 0)
        #expect(
            try HelperProcess.run(latchkey, ["show-keychain-info"], environment: sandbox.environment).stdout.contains(
                ", locked"))
        let unlocked = try sandbox.cli("unlock-keychain", "--unattended")
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        #expect(
            try HelperProcess.run(latchkey, ["show-keychain-info"], environment: sandbox.environment).stdout.contains(
                "agent: running (pid \(sandbox.agent?.pid ?? 0)), unlocked\n"))

        // After an update no one signed: the agent refuses and says why.
        #expect(try sandbox.cli("lock-keychain").status == 0)
        try tpm.extendPCR(23, with: Self.measurement)
        let refused = try sandbox.cli("unlock-keychain", "--unattended")
        #expect(refused.status == 36)
        #expect(
            refused.stderr.hasPrefix(
                "latchkey: unlock-keychain: User interaction is not allowed. (PCR 23 changed and the signed policy the keychain holds does not approve the values now"
            ), "\(refused.stderr)")
    }
}
