import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// With no agent, no passphrase and no terminal (ssh without a tty, CI, cron) a helper fails at once, with
/// the reason on standard error (git) or output (docker) — it never waits for a terminal it does not have —
/// and git goes on without it.
@Suite struct HeadlessHelperTests {
    static let noTerminal =
        "User interaction is not allowed. (no terminal to ask for the passphrase; set LATCHKEY_PASSPHRASE or pass a file descriptor); unlock the keychain for the agent with `latchkey unlock-keychain` and register this helper with it (see `latchkey help register-application`), or give the passphrase in LATCHKEY_PASSPHRASE"

    @Test func theGitHelperFailsAtOnceWithTheReason() throws {
        let sandbox = try HelperSandbox()
        _ = try sandbox.gitHelper(
            "store", lines("protocol=https", "host=example.com", "username=alice", "password=s3cret"))
        for operation in ["get", "store", "erase"] {
            let started = Date()
            let output = try sandbox.gitHelper(
                operation, lines("protocol=https", "host=example.com", "username=alice", "password=other"),
                environment: sandbox.headless)
            #expect(Date().timeIntervalSince(started) < 10)
            #expect(output.status == 36)
            #expect(output.stdout.isEmpty)
            #expect(output.stderr == "git-credential-latchkey: \(operation): \(Self.noTerminal)\n")
        }
        #expect(
            try sandbox.gitHelper("get", lines("protocol=https", "host=example.com")).stdout
                == lines("username=alice", "password=s3cret"))
    }

    @Test func gitShowsTheMessageAndGoesOnToItsOwnPrompt() throws {
        let sandbox = try HelperSandbox()
        let filled = try sandbox.gitCredential(
            "fill", lines("protocol=https", "host=example.com"), environment: sandbox.headless)
        #expect(filled.status == 0)
        #expect(
            filled.stdout
                == lines("protocol=https", "host=example.com", "username=askpass-username", "password=askpass-password")
        )
        #expect(filled.stderr.hasPrefix("git-credential-latchkey: get: \(Self.noTerminal)\n"))
    }

    @Test func theDockerHelperFailsAtOnceWithTheReason() throws {
        let sandbox = try HelperSandbox()
        for (action, input) in [
            ("get", "ghcr.io"), ("list", ""), ("erase", "ghcr.io"),
            ("store", #"{"ServerURL":"ghcr.io","Username":"a","Secret":"b"}"#),
        ] {
            let output = try sandbox.dockerHelper(action, input, environment: sandbox.headless)
            #expect(output.status == 1)
            #expect(output.stdout == Self.noTerminal + "\n")
        }
        #expect(try sandbox.internetPasswords().isEmpty)
    }

    @Test func aWrongPassphraseIsAuthFailed() throws {
        let sandbox = try HelperSandbox()
        var wrong = sandbox.environment
        wrong["LATCHKEY_PASSPHRASE"] = "not the passphrase"
        let output = try sandbox.gitHelper("get", lines("protocol=https", "host=example.com"), environment: wrong)
        #expect(output.status == 51)
        #expect(
            output.stderr.hasPrefix(
                "git-credential-latchkey: get: The user name or passphrase you entered is not correct."))
    }
}
