import Foundation
import LatchkeyTestSupport
import Testing

/// OpenSSH's own `regress/agent-restrict.sh` against latchkeyd (`script/openssh-agent-restrict`): destination
/// constraints through up to five hops of agent forwarding, host certificates and user patterns. OpenSSH's
/// source is not in this repository, and the run takes about a minute and a half, so it runs only when
/// `LATCHKEY_OPENSSH_SOURCE` names an OpenSSH source tree that matches the installed programs.
@Suite(.serialized, .dedicatedThreads) struct OpenSSHAgentRestrictTests {
    static let source = ProcessInfo.processInfo.environment["LATCHKEY_OPENSSH_SOURCE"]

    @Test(.enabled(if: source != nil, "set LATCHKEY_OPENSSH_SOURCE to an OpenSSH source tree (V_9_2_P1 on Debian 12)"))
    func agentRestrictPasses() throws {
        let repository = URL(fileURLWithPath: AgentHardeningTests.tools).deletingLastPathComponent()
            .deletingLastPathComponent().path
        let binaries = URL(fileURLWithPath: HelperProcess.product("latchkeyd")).deletingLastPathComponent().path
        let run = try HelperProcess.run(
            repository + "/script/openssh-agent-restrict", [try #require(Self.source)],
            environment: [
                "PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "LATCHKEY_BIN": binaries, "HOME": NSTemporaryDirectory(),
            ],
            timeout: 600)
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.hasSuffix("multihop cycle restricted allow\nok agent restrictions\n"), "\(run.stdout)")
    }
}
