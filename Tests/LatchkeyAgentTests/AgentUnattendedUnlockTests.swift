import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// `latchkeyd --unlock-unattended`: a service's agent opens its keychain at start through the TPM (sealed to
/// PCR values by `latchkey tpm enroll --unattended`), with no passphrase anywhere; after a PCR change it says
/// why on standard error and serves the keychain locked, which the passphrase still opens.
@Suite(.serialized, .dedicatedThreads) struct AgentUnattendedUnlockTests {
    static let measurement = Data((0..<32).map { UInt8($0) })

    /// A sandbox whose keychain holds one password and is enrolled for unattended unlock to PCR 7 of `tpm`.
    static func enrolledSandbox(_ tpm: SoftwareTPM) throws -> AgentSandbox {
        let sandbox = try AgentSandbox()
        sandbox.agentEnvironment["LATCHKEY_TPM_TCTI"] = tpm.tcti
        var environment = sandbox.withPassphrase
        environment["LATCHKEY_TPM_TCTI"] = tpm.tcti
        let latchkey = HelperProcess.product("latchkey")
        let added = try HelperProcess.run(
            latchkey, ["add-generic-password", "-s", "mail", "-a", "alice", "-w", "hunter2"], environment: environment)
        #expect(added.status == 0, "\(added.stderr)")
        let enrolled = try HelperProcess.run(
            latchkey, ["tpm", "enroll", "--unattended", "--pcrs", "7"], environment: environment)
        #expect(enrolled.status == 0, "\(enrolled.stderr)")
        return sandbox
    }

    /// `show-keychain-info` through the agent, with no passphrase. (The agent answers once it has started, so
    /// what it said on standard error while starting is in its log by then.)
    static func info(_ sandbox: AgentSandbox) throws -> String {
        try HelperProcess.run(
            HelperProcess.product("latchkey"), ["show-keychain-info"], environment: sandbox.environment
        ).stdout
    }

    @Test func theAgentOpensTheKeychainAtStartWithNoPassphrase() throws {
        let tpm = try SoftwareTPM()
        let sandbox = try Self.enrolledSandbox(tpm)
        try sandbox.start(HelperProcess.product("latchkeyd"), ["--verbose", "--unlock-unattended"])
        #expect(try Self.info(sandbox).contains("agent: running (pid \(sandbox.agent?.pid ?? 0)), unlocked\n"))
        #expect(sandbox.agentLog.contains("latchkeyd: unlocked through the TPM (unattended)\n"), "\(sandbox.agentLog)")
        #expect(!sandbox.agentLog.contains("unattended unlock failed"))
    }

    @Test func theVariableAsksForItToo() throws {
        let tpm = try SoftwareTPM()
        let sandbox = try Self.enrolledSandbox(tpm)
        sandbox.agentEnvironment["LATCHKEY_UNLOCK_UNATTENDED"] = "1"
        try sandbox.start(HelperProcess.product("latchkeyd"), [])
        #expect(try Self.info(sandbox).contains(", unlocked\n"))
    }

    @Test func withoutTheOptionTheAgentStartsLocked() throws {
        let tpm = try SoftwareTPM()
        let sandbox = try Self.enrolledSandbox(tpm)
        try sandbox.start()
        #expect(
            try Self.info(sandbox).contains(
                "agent: running (pid \(sandbox.agent?.pid ?? 0)), locked (not unlocked since opened)\n"))
    }

    @Test func afterAPCRChangeItSaysWhyAndServesTheKeychainLocked() throws {
        let tpm = try SoftwareTPM()
        let sandbox = try Self.enrolledSandbox(tpm)
        try tpm.extendPCR(7, with: Self.measurement)  // A new boot loader was measured.
        // Not verbose: the failure is said anyway.
        try sandbox.start(HelperProcess.product("latchkeyd"), ["--unlock-unattended"])
        #expect(try Self.info(sandbox).contains(", locked (not unlocked since opened)\n"))
        #expect(
            sandbox.agentLog
                == "latchkeyd: the unattended unlock failed: User interaction is not allowed. (PCR 7 changed since the unattended unlock was sealed (a firmware, boot loader or kernel update?); the TPM refused, so open the keychain with its passphrase or recovery code and enroll --unattended again); the keychain stays locked until its passphrase or recovery code opens it\n"
        )
        // The client knows no TPM (no LATCHKEY_TPM_TCTI): the agent, which has it, checks the passphrase.
        let unlocked = try sandbox.cli("unlock-keychain")
        #expect(unlocked.status == 0, "\(unlocked.stderr)")
        #expect(try Self.info(sandbox).contains("agent: running (pid \(sandbox.agent?.pid ?? 0)), unlocked\n"))
    }

    @Test func aKeychainNeverEnrolledIsServedLockedWithTheReason() throws {
        let tpm = try SoftwareTPM()
        let sandbox = try AgentSandbox()
        sandbox.agentEnvironment["LATCHKEY_TPM_TCTI"] = tpm.tcti
        try sandbox.start(HelperProcess.product("latchkeyd"), ["--unlock-unattended"])
        #expect(try Self.info(sandbox).contains(", locked (not unlocked since opened)\n"))
        #expect(sandbox.agentLog.hasPrefix("latchkeyd: the unattended unlock failed: "), "\(sandbox.agentLog)")
        #expect(
            sandbox.agentLog.hasSuffix("; the keychain stays locked until its passphrase or recovery code opens it\n"))
    }
}
