import Foundation
import Latchkey
import LatchkeyProtocol
import Testing

/// pam_latchkey is C (contrib/pam/pam_latchkey.c) and speaks the agent protocol with its own constants: each
/// must be the Swift side's, or a login hands the agent a request it reads as another.
@Suite struct PAMModuleConstantsTests {
    static let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("contrib/pam/pam_latchkey.c")

    /// The module's `#define NAME value` lines, by name.
    static func defines() throws -> [String: String] {
        var found: [String: String] = [:]
        for line in try String(contentsOf: source, encoding: .utf8).split(separator: "\n")
        where line.hasPrefix("#define LK_") {
            let words = line.split(separator: " ", maxSplits: 2)
            guard words.count == 3 else { continue }
            found[String(words[1])] = String(words[2].prefix { $0 != " " && $0 != "/" })
        }
        return found
    }

    @Test func theModulesProtocolConstantsAreTheAgents() throws {
        let defines = try Self.defines()
        #expect(defines["LK_VERSION"] == "\(AgentFrame.version)")
        #expect(defines["LK_CHALLENGE"] == "\(AgentGreeting.challengeLength)")
        #expect(defines["LK_OP_HELLO"] == "\(AgentOperation.hello.rawValue)")
        #expect(defines["LK_OP_UNLOCK"] == "\(AgentOperation.unlock.rawValue)")
        #expect(defines["LK_OP_UNLOCK_UNATTENDED"] == "\(AgentOperation.unlockUnattended.rawValue)")
        #expect(defines["LK_OP_UNLOCK_DERIVED"] == "\(AgentOperation.unlockDerived.rawValue)")
        #expect(defines["LK_DERIVED_KEY_BYTES"] == "\(DerivedUnlockKey.byteCount)")
        #expect(defines["LK_ERR_AUTH_FAILED"] == "(\(KeychainStatus.authFailed.rawValue))")
        #expect(defines["LK_ERR_NO_SUCH_KEYCHAIN"] == "(\(KeychainStatus.noSuchKeychain.rawValue))")
    }
}
