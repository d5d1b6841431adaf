import Foundation
import LatchkeyTestSupport
import Testing

/// git's own `t/t0303-credential-external.sh` against git-credential-latchkey (`script/git-credential-external`):
/// embedded (the passphrase in the environment) and through a latchkeyd with the helper registered. git's
/// source is not in this repository, and the run builds git first (minutes), so it runs only when
/// `LATCHKEY_GIT_SOURCE` names a git source tree.
@Suite(.serialized) struct GitCredentialExternalTests {
    static let source = ProcessInfo.processInfo.environment["LATCHKEY_GIT_SOURCE"]

    @Test(.enabled(if: source != nil, "set LATCHKEY_GIT_SOURCE to a git source tree (git's t/ has t0303)"))
    func t0303PassesEmbeddedAndThroughTheAgent() throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let run = try HelperProcess.run(
            repository + "/script/git-credential-external", [try #require(Self.source)],
            environment: [
                "PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "LATCHKEY_BIN": HelperSandbox.buildDirectory,
                "HOME": NSTemporaryDirectory(),
            ],
            timeout: 1800)
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        let lines = run.stdout.split(separator: "\n")
        #expect(!lines.contains { $0.hasPrefix("not ok") }, "\(run.stdout)")
        #expect(lines.filter { $0.hasPrefix("# passed all ") && $0.hasSuffix(" test(s)") }.count == 2, "\(run.stdout)")
        #expect(
            run.stderr.hasSuffix("script/git-credential-external: embedded: exit 0; agent: exit 0\n"), "\(run.stderr)")
    }
}
