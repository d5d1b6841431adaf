import Foundation
import Latchkey
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

/// The agent's unlock with a derived key (issue 56): it spares the agent the Argon2id an unlock costs, so only
/// the login's hand-over — root, to an agent that is not root's — may use it. Every other caller has the
/// passphrase's unlock. (The hand-over itself: `PAMEarlyDerivationTests`.)
@Suite(.serialized, .dedicatedThreads) struct AgentDerivedUnlockTests {
    @Test func aDerivedKeyFromAnyoneButTheLoginIsRefused() throws {
        // The agent runs as the test (root): no caller is root's hand-over to another user's agent.
        let sandbox = try AgentSandbox()
        try sandbox.start()
        let key = try KeychainDatabase.open(at: sandbox.keychainPath)
            .deriveUnlockKey(from: Passphrase(AgentSandbox.passphrase))
        let client = try #require(
            try AgentClient.connect(keychainPath: sandbox.keychainPath, environment: sandbox.environment))
        #expect(
            throws: KeychainError(
                .missingEntitlement, "only the login's hand-over (pam_latchkey, as root) unlocks with a derived key")
        ) { _ = try client.send(.unlockDerived(key)) }
        #expect(try client.status().lockState != .unlocked)
        #expect(!sandbox.agentLog.contains("latchkeyd: unlocked"), "\(sandbox.agentLog)")
        // The passphrase's unlock is there for it.
        _ = try client.send(.keychain(.unlock(Passphrase(AgentSandbox.passphrase))))
        #expect(try client.status().lockState == .unlocked)
    }
}
