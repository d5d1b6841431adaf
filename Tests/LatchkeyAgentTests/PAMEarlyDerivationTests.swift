import Foundation
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 56, the login: pam_latchkey's auth step starts the key derivation when the agent is not there yet
/// (a first login: the runtime directory and the agent come with the session), and the session step hands the
/// derived key to the agent in place of the password — or the password, whenever the key does not do.
@Suite(.serialized, .dedicatedThreads, .enabled(if: PAMSandbox.available, "needs root, pamtester, useradd and cc"))
struct PAMEarlyDerivationTests {
    /// A first login's stack: at the auth step PAM's environment has no runtime directory; pam_env stands in
    /// for pam_systemd and sets it in the session step. `ACCOUNT` and `EXTRA` are replaced by a test's
    /// account and session lines.
    static let stack = """
        auth required pam_unix.so
        auth optional MODULE
        account required pam_permit.so
        ACCOUNT
        session required pam_env.so readenv=0 user_readenv=0 conffile=HOME/.session.env
        EXTRA
        session optional MODULE
        """

    static func sandbox(account: String = "", extra: String = "") throws -> PAMSandbox {
        let sandbox = try PAMSandbox(
            stack: stack.replacingOccurrences(of: "ACCOUNT", with: account).replacingOccurrences(
                of: "EXTRA", with: extra))
        try Data("XDG_RUNTIME_DIR DEFAULT=\(sandbox.runtime)\n".utf8).write(
            to: URL(fileURLWithPath: sandbox.home + "/.session.env"))
        return sandbox
    }

    @Test func theSessionUnlocksWithTheKeyTheAuthStepDerived() throws {
        let sandbox = try Self.sandbox()
        try sandbox.createKeychain(passphrase: sandbox.password)
        try sandbox.startAgent()
        #expect(
            try Self.firstLogin(sandbox) == [
                "session: unlocked the keychain of \(sandbox.name) (with the key derived at the auth step)"
            ])
        #expect(try sandbox.agentState() == "unlocked", "\(sandbox.agentLog)")
        #expect(sandbox.agentLog.contains("latchkeyd: unlocked (with the key the login derived at its auth step)\n"))
        #expect(!sandbox.agentLog.contains("does not unlock"), "\(sandbox.agentLog)")
        // The tool that derived it is gone: the session step ended it once it had the key.
        #expect(sandbox.processes(named: "latchkey") == [])
    }

    @Test func aKeyDerivedBeforeThePasswordChangedGivesWayToThePassword() throws {
        // Between the steps the keychain's password is set again (to the same one: a new salt), after the
        // derivation has written its key. The agent refuses the stale key; the password unlocks.
        let sandbox = try Self.sandbox(extra: "session optional pam_exec.so quiet HOME/.between-the-steps")
        try sandbox.createKeychain(passphrase: sandbox.password)
        let tool = HelperProcess.product("latchkey")
        // The module runs this wrapper as its tool; it says when the derivation is done.
        let wrapper = sandbox.home + "/derive-then-say"
        try installScript(
            """
            #!/bin/sh
            "\(tool)" "$@"
            status=$?
            echo "$status" > "$HOME/derivation.done"
            exit "$status"
            """, at: wrapper)
        #expect(chown(wrapper, sandbox.uid, sandbox.gid) == 0)
        let passwordFile = sandbox.work.file("password")
        try Data((sandbox.password + "\n").utf8).write(to: URL(fileURLWithPath: passwordFile))
        #expect(chmod(passwordFile, 0o600) == 0)
        try installScript(
            """
            #!/bin/sh
            n=0
            while [ ! -s "\(sandbox.home)/derivation.done" ] && [ $n -lt 3000 ]; do sleep 0.01; n=$((n + 1)); done
            exec 3< "\(passwordFile)" 4< "\(passwordFile)"
            HOME="\(sandbox.home)" /usr/bin/setpriv --reuid=\(sandbox.uid) --regid=\(sandbox.gid) --clear-groups \\
                "\(tool)" set-keychain-password --passphrase-fd 3 --new-passphrase-fd 4 > "\(sandbox.work.file("change.out"))" 2>&1
            """, at: sandbox.home + "/.between-the-steps")
        try rewriteStack(of: sandbox, tool: wrapper)
        try sandbox.startAgent()
        let lines = try Self.firstLogin(sandbox)
        let done = try String(contentsOfFile: sandbox.home + "/derivation.done", encoding: .utf8)
        #expect(done == "0\n", "the derivation's tool ended with \(done)")
        let change = (try? String(contentsOfFile: sandbox.work.file("change.out"), encoding: .utf8)) ?? ""
        #expect(change == "", "set-keychain-password: \(change)")
        #expect(lines == ["session: unlocked the keychain of \(sandbox.name)"])
        #expect(
            sandbox.agentLog.contains(
                "latchkeyd: the key the login derived at its auth step does not unlock the keychain (errSecAuthFailed: "
                    + "The user name or passphrase you entered is not correct. (the key was derived under other key "
                    + "derivation settings))\n"
            ), "\(sandbox.agentLog)")
        #expect(sandbox.agentLog.contains("latchkeyd: unlocked\n"), "\(sandbox.agentLog)")
        #expect(try sandbox.agentState() == "unlocked")
    }

    @Test func aPasswordThatDoesNotOpenTheKeychainDerivesNothing() throws {
        // The tool checks the key it derived (a keychain without a TPM can be checked without one): a login
        // password that is not the keychain's hands no key over, and the password's own answer is the log's.
        let sandbox = try Self.sandbox()
        try sandbox.createKeychain(passphrase: "not the login password")
        try sandbox.startAgent()
        #expect(
            try Self.firstLogin(sandbox) == [
                "session: the keychain of \(sandbox.name) stays locked: the password does not unlock the keychain"
            ])
        #expect(!sandbox.agentLog.contains("derived"), "\(sandbox.agentLog)")
        #expect(try sandbox.agentState() == "locked (not unlocked since opened)")
    }

    @Test func aLoginThatStopsAfterItsAuthStepLeavesNoDerivationRunning() throws {
        // Authenticate and the account step, no session: pam_end runs the kept data's cleanup, which ends the
        // tool (here one that never ends by itself, started before the account step ends) through its pidfd.
        let sandbox = try Self.sandbox(account: "account required pam_exec.so quiet HOME/.wait-for-the-tool")
        try sandbox.createKeychain(passphrase: sandbox.password)
        let hang = sandbox.home + "/hang"
        try installScript("#!/bin/sh\necho $$ > \"$HOME/hang.pid\"\nexec sleep 300\n", at: hang)
        #expect(chown(hang, sandbox.uid, sandbox.gid) == 0)
        try installScript(
            """
            #!/bin/sh
            n=0
            while [ ! -s "\(sandbox.home)/hang.pid" ] && [ $n -lt 3000 ]; do sleep 0.01; n=$((n + 1)); done
            """, at: sandbox.home + "/.wait-for-the-tool")
        try rewriteStack(of: sandbox, tool: hang)
        let log = try SyslogCapture(at: sandbox.work.file("log.sock"))
        let login = try sandbox.loggedPamtester(
            ["authenticate", "acct_mgmt"], input: sandbox.password + "\n", log: log, runtimeAtAuth: false)
        #expect(login.status == 0, "\(login.stdout)\(login.stderr)")
        #expect(log.moduleLines == [], "\(log.messages)")
        let written = try String(contentsOfFile: sandbox.home + "/hang.pid", encoding: .utf8)
        let pid = try #require(pid_t(written.trimmingCharacters(in: .newlines)), "hang.pid: \(written)")
        #expect(PAMSandbox.ends(pid, within: .seconds(5)), "the derivation's tool \(pid) still runs")
    }

    /// A first login (authenticate, open_session) with no runtime directory at the auth step, which must
    /// succeed: the module's log lines.
    static func firstLogin(_ sandbox: PAMSandbox) throws -> [String] {
        let log = try SyslogCapture(at: sandbox.work.file("log.sock"))
        let login = try sandbox.loggedPamtester(
            ["authenticate", "open_session"], input: sandbox.password + "\n", log: log, runtimeAtAuth: false)
        #expect(login.status == 0, "\(login.stdout)\(login.stderr)")
        #expect(
            login.stdout == "pamtester: successfully authenticated\npamtester: successfully opened a session\n",
            "\(login.stdout)")
        return log.moduleLines
    }

    /// Points the module's `latchkey=` at `tool` in the sandbox's service file.
    private func rewriteStack(of sandbox: PAMSandbox, tool: String) throws {
        let path = "/etc/pam.d/\(sandbox.service)"
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let rewritten = text.replacingOccurrences(
            of: "latchkey=\(HelperProcess.product("latchkey"))", with: "latchkey=\(tool)")
        try Data(rewritten.utf8).write(to: URL(fileURLWithPath: path))
    }
}
