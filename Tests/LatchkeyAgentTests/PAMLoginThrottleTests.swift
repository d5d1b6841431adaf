import Foundation
import LatchkeyTestSupport
import Testing

/// The third review's point 6 (issue 50): any program of the user could run up the unlock throttle and keep
/// the login's unlock through PAM from unlocking. pam_latchkey hands the password over as root, which the
/// agent never holds back for other programs' wrong guesses.
@Suite(.serialized, .dedicatedThreads, .enabled(if: PAMSandbox.available, "needs root, pamtester, useradd and cc"))
struct PAMLoginThrottleTests {
    @Test func anotherProgramsGuessesDoNotKeepTheLoginFromUnlocking() throws {
        let sandbox = try PAMSandbox(stack: PAMModuleTests.login)
        try sandbox.createKeychain(passphrase: sandbox.password)
        try sandbox.startAgent()
        // A program of the user (python3, unregistered) guesses through the agent's socket until refused.
        let guesses = try HelperProcess.run(
            "/usr/bin/setpriv",
            sandbox.asUser(
                "/usr/bin/python3",
                [AgentHardeningTests.tools + "/agent-ask.py", sandbox.socketPath] + (0..<4).map { "3:guess \($0)" }),
            environment: sandbox.userEnvironment)
        #expect(guesses.stdout == "3 -25293\n3 -25293\n3 -25293\n3 -25293\n", "\(guesses.stderr)")
        #expect(sandbox.agentLog.contains("refused an unlock without trying it: 3 wrong passphrases in a row"))
        let login = try sandbox.pamtester(["authenticate", "open_session"], input: sandbox.password + "\n")
        #expect(login.status == 0, "\(login.stdout)\(login.stderr)")
        #expect(try sandbox.agentState() == "unlocked", "\(sandbox.agentLog)")
        #expect(sandbox.agentLog.contains("root connected (pid "), "\(sandbox.agentLog)")
    }
}
