import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyCLI

/// `--version` for the tool and its agent: one number, printed by both and named in both helps.
@Suite(.dedicatedThreads) struct VersionTests {
    let sandbox = CLISandbox()

    @Test func latchkeyAndLatchkeydPrintTheSameVersion() throws {
        let tool = try sandbox.run("--version")
        #expect(tool.status == 0)
        #expect(tool.stdout == "latchkey \(LatchkeyCommandLine.version)\n")
        #expect(tool.stderr == "")
        let agent = try HelperProcess.run(
            HelperProcess.product("latchkeyd"), ["--version"], environment: sandbox.environment)
        #expect(agent.status == 0, "\(agent.stderr)")
        #expect(agent.stdout == "latchkeyd \(LatchkeyCommandLine.version)\n")
        #expect(agent.stderr == "")
    }

    @Test func bothHelpsNameVersion() throws {
        let tool = try sandbox.run("--help")
        #expect(
            tool.stdout.hasSuffix(
                """
                `latchkey help <command>` or `latchkey <command> --help` explains a command in full;
                `latchkey --version` prints the version.

                """))
        let agent = try HelperProcess.run(
            HelperProcess.product("latchkeyd"), ["--help"], environment: sandbox.environment)
        let line = agent.stdout.split(separator: "\n").first { $0.hasPrefix("  --version ") }
        #expect(line?.hasSuffix("  Print latchkeyd's version and exit.") == true, "\(agent.stdout)")
        let manual = try HelperProcess.run(
            HelperProcess.product("latchkeyd"), ["--manual"], environment: sandbox.environment)
        #expect(
            manual.stdout.hasPrefix(
                ".TH LATCHKEYD 1 \"\" \"latchkeyd \(LatchkeyCommandLine.version)\" \"User Commands\"\n"))
    }
}
