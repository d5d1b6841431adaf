import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// pam_latchkey.so (contrib/pam) through pamtester, with a PAM service file the test writes and removes, for
/// a throwaway user: the login unlocks the user's latchkeyd, a password change re-wraps the keychain, and no
/// failure of the module ever fails the login.
@Suite(.serialized, .dedicatedThreads, .enabled(if: PAMSandbox.available, "needs root, pamtester, useradd and cc"))
struct PAMModuleTests {
    /// A login's stack: pam_unix checks the password, pam_latchkey keeps it and unlocks at the session step.
    static let login = """
        auth required pam_unix.so
        auth optional MODULE
        account required pam_permit.so
        session optional MODULE
        password required pam_unix.so
        password optional MODULE use_authtok
        """

    @Test func theLoginUnlocksTheAgent() throws {
        let sandbox = try PAMSandbox(stack: Self.login)
        try sandbox.createKeychain(passphrase: sandbox.password)
        try sandbox.startAgent()
        #expect(try sandbox.agentState() == "locked (not unlocked since opened)")
        let login = try sandbox.pamtester(["authenticate", "open_session"], input: sandbox.password + "\n")
        #expect(login.status == 0, "\(login.stdout)\(login.stderr)")
        #expect(
            login.stdout == "pamtester: successfully authenticated\npamtester: successfully opened a session\n",
            "\(login.stdout)")
        #expect(try sandbox.agentState() == "unlocked", "\(sandbox.agentLog)")
        #expect(sandbox.agentLog.contains("latchkeyd: unlocked"))
    }

    @Test func withoutTheAuthLineTheSessionHasNoPassword() throws {
        // libpam wipes PAM_AUTHTOK when pam_authenticate returns: only the auth step can keep it.
        let sandbox = try PAMSandbox(
            stack: """
                auth required pam_unix.so
                session optional MODULE
                """)
        try sandbox.createKeychain(passphrase: sandbox.password)
        try sandbox.startAgent()
        let login = try sandbox.pamtester(["authenticate", "open_session"], input: sandbox.password + "\n")
        #expect(login.status == 0, "\(login.stderr)")
        #expect(login.stdout.contains("Latchkey: this login gave no password"), "\(login.stdout)")
        #expect(try sandbox.agentState() == "locked (not unlocked since opened)")
    }

    @Test func aScreenLockersStackUnlocksTheRunningAgentAtAuth() throws {
        // A screen locker has no session step: the auth step unlocks the agent that runs.
        let sandbox = try PAMSandbox(
            stack: """
                auth required pam_unix.so
                auth optional MODULE
                """)
        try sandbox.createKeychain(passphrase: sandbox.password)
        try sandbox.startAgent()
        let unlock = try sandbox.pamtester(["authenticate"], input: sandbox.password + "\n")
        #expect(unlock.status == 0, "\(unlock.stderr)")
        #expect(unlock.stdout == "pamtester: successfully authenticated\n")
        #expect(try sandbox.agentState() == "unlocked", "\(sandbox.agentLog)")
    }

    @Test func aWrongPasswordDoesNotUnlockAndTheStackDecides() throws {
        let sandbox = try PAMSandbox(stack: Self.login)
        try sandbox.createKeychain(passphrase: sandbox.password)
        try sandbox.startAgent()
        let login = try sandbox.pamtester(["authenticate"], input: "not the password\n")
        #expect(login.status != 0)
        #expect(login.stderr.contains("Authentication failure"), "\(login.stderr)")
        #expect(try sandbox.agentState() == "locked (not unlocked since opened)")
        #expect(!sandbox.agentLog.contains("latchkeyd: unlocked"))
    }

    @Test func noFailureOfTheModuleFailsTheLogin() throws {
        // No keychain, no agent, no runtime directory's socket: the session still opens.
        let sandbox = try PAMSandbox(
            stack: """
                auth required pam_unix.so
                auth required MODULE
                account required pam_permit.so
                session required MODULE
                """)
        let login = try sandbox.pamtester(
            ["authenticate", "open_session", "close_session"], input: sandbox.password + "\n")
        #expect(login.status == 0, "\(login.stderr)")
        #expect(
            login.stdout.hasSuffix(
                "pamtester: successfully opened a session\npamtester: session has successfully been closed.\n"),
            "\(login.stdout)")
        #expect(!FileManager.default.fileExists(atPath: sandbox.keychainPath))
    }

    @Test func aToolThatHangsIsEndedAndTheLoginGoesOn() throws {
        // The tool the session step runs (here to create the keychain) never answers: the child running it is
        // ended when its bound passes (`child_seconds`, at most the module's 90 s), and the session opens.
        let sandbox = try PAMSandbox(
            stack: """
                auth required pam_unix.so
                auth optional MODULE
                session optional MODULE create child_seconds=2 latchkey=HOME/hanging-latchkey
                """)
        let tool = sandbox.home + "/hanging-latchkey"
        try installScript("#!/bin/sh\necho $$ > \"$HOME/hanging.pid\"\nexec sleep 600\n", at: tool)
        #expect(chown(tool, sandbox.uid, sandbox.gid) == 0)
        let started = ContinuousClock.now
        let login = try sandbox.pamtester(["authenticate", "open_session"], input: sandbox.password + "\n")
        let took = ContinuousClock.now - started
        #expect(login.status == 0, "\(login.stderr)")
        #expect(
            login.stdout == "pamtester: successfully authenticated\npamtester: successfully opened a session\n",
            "\(login.stdout)")
        // Not a speed check: the bound is 2 s, and without it the step would wait out the tool's 600 s sleep.
        #expect(took < .seconds(60), "\(took)")
        let pid = try #require(
            Int32(
                String(contentsOfFile: sandbox.home + "/hanging.pid", encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)))
        // The module kills the child's whole session at the bound: the tool goes too (it may linger a moment,
        // or as a zombie nobody reaps yet).
        #expect(Self.ends(pid, within: .seconds(10)), "the hanging tool (pid \(pid)) still runs")
        #expect(!FileManager.default.fileExists(atPath: sandbox.keychainPath))
    }

    /// Whether process `pid` is gone (or a zombie) within `limit`.
    static func ends(_ pid: Int32, within limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        repeat {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
            // The state follows the command's closing parenthesis: "pid (comm) S ...".
            if let close = stat.lastIndex(of: ")"), stat[stat.index(after: close)...].hasPrefix(" Z") { return true }
            Thread.sleep(forTimeInterval: 0.05)
        } while ContinuousClock.now < deadline
        return false
    }

    @Test func aPasswordChangeRewrapsTheKeychain() throws {
        let sandbox = try PAMSandbox(stack: Self.login)
        try sandbox.createKeychain(passphrase: sandbox.password)
        let new = "a new login password 42"
        // PAM_CHANGE_EXPIRED_AUTHTOK: pam_unix asks root for the old password too, as it asks a user.
        let changed = try sandbox.pamtester(
            ["chauthtok(PAM_CHANGE_EXPIRED_AUTHTOK)"],
            input: "\(sandbox.password)\n\(new)\n\(new)\n")
        #expect(changed.status == 0, "\(changed.stdout)\(changed.stderr)")
        #expect(try !sandbox.unlocks(sandbox.password))
        #expect(try sandbox.unlocks(new))
        #expect(!FileManager.default.fileExists(atPath: sandbox.markerPath))
        // The next login with the new password unlocks.
        try sandbox.startAgent()
        let login = try sandbox.pamtester(["authenticate", "open_session"], input: new + "\n")
        #expect(login.status == 0, "\(login.stderr)")
        #expect(try sandbox.agentState() == "unlocked", "\(sandbox.agentLog)")
    }

    @Test func aChangeByRootAsksForTheOldPasswordAtTheNextLogin() throws {
        let sandbox = try PAMSandbox(stack: Self.login)
        try sandbox.createKeychain(passphrase: sandbox.password)
        let new = "root set this password 7"
        // Root's `passwd user`: no old password.
        let changed = try sandbox.pamtester(["chauthtok"], input: "\(new)\n\(new)\n")
        #expect(changed.status == 0, "\(changed.stdout)\(changed.stderr)")
        #expect(try sandbox.unlocks(sandbox.password), "the keychain cannot be re-wrapped without its password")
        #expect(FileManager.default.fileExists(atPath: sandbox.markerPath))
        try sandbox.startAgent()
        // The login: the new password, then the keychain's previous one, asked once.
        let login = try sandbox.pamtester(["authenticate", "open_session"], input: "\(new)\n\(sandbox.password)\n")
        #expect(login.status == 0, "\(login.stderr)")
        #expect(
            login.stderr.contains("Your login password was changed; the keychain's previous password: "),
            "\(login.stderr)")
        #expect(try sandbox.agentState() == "unlocked", "\(sandbox.agentLog)")
        #expect(try sandbox.unlocks(new))
        #expect(try !sandbox.unlocks(sandbox.password))
        #expect(!FileManager.default.fileExists(atPath: sandbox.markerPath))
    }

    @Test func onlyIfLimitsTheServices() throws {
        let sandbox = try PAMSandbox(
            stack: """
                auth required pam_unix.so
                auth optional MODULE only_if=login,gdm-password
                session required pam_permit.so
                session optional MODULE only_if=login,gdm-password
                """)
        try sandbox.createKeychain(passphrase: sandbox.password)
        try sandbox.startAgent()
        let login = try sandbox.pamtester(["authenticate", "open_session"], input: sandbox.password + "\n")
        #expect(login.status == 0, "\(login.stderr)")
        #expect(try sandbox.agentState() == "locked (not unlocked since opened)")

        // The service's own name in the list: it acts.
        let named = try PAMSandbox(
            stack:
                "auth required pam_unix.so\nauth optional MODULE only_if=sshd,SERVICE\nsession optional MODULE only_if=sshd,SERVICE\n"
        )
        try named.createKeychain(passphrase: named.password)
        try named.startAgent()
        let acted = try named.pamtester(["authenticate", "open_session"], input: named.password + "\n")
        #expect(acted.status == 0, "\(acted.stderr)")
        #expect(try named.agentState() == "unlocked", "\(named.agentLog)")
    }

    @Test func createMakesTheLoginKeychainAtTheFirstLogin() throws {
        let sandbox = try PAMSandbox(
            stack: """
                auth required pam_unix.so
                auth optional MODULE
                session optional MODULE create
                """)
        #expect(!FileManager.default.fileExists(atPath: sandbox.keychainPath))
        let login = try sandbox.pamtester(["authenticate", "open_session"], input: sandbox.password + "\n")
        #expect(login.status == 0, "\(login.stderr)")
        var status = stat()
        #expect(stat(sandbox.keychainPath, &status) == 0)
        #expect(status.st_uid == sandbox.uid)
        #expect(status.st_mode & 0o077 == 0)
        #expect(try sandbox.unlocks(sandbox.password))
        // A second login leaves it alone.
        let again = try sandbox.pamtester(["authenticate", "open_session"], input: sandbox.password + "\n")
        #expect(again.status == 0)
        #expect(try sandbox.unlocks(sandbox.password))
    }

    @Test func anAgentStartedBeforeTheKeychainIsUnlockedByTheLoginThatCreatesIt() throws {
        // xdg-desktop-portal (or socket activation) started the agent before the first login made the keychain.
        let sandbox = try PAMSandbox(
            stack: """
                auth required pam_unix.so
                auth optional MODULE
                session optional MODULE create
                """)
        try sandbox.startAgent(["--wait-for-keychain", "120"])
        #expect(!FileManager.default.fileExists(atPath: sandbox.keychainPath))
        let login = try sandbox.pamtester(["authenticate", "open_session"], input: sandbox.password + "\n")
        #expect(login.status == 0, "\(login.stderr)")
        #expect(
            login.stdout == "pamtester: successfully authenticated\npamtester: successfully opened a session\n",
            "\(login.stdout)")
        // The auth step found the agent waiting: it holds the password (the session step's unlock may reach
        // it waiting too, or already serving the new keychain).
        #expect(sandbox.agentLog.contains("latchkeyd: holding the password pid "), "\(sandbox.agentLog)")
        try waitUntil("the agent serves the new keychain unlocked", seconds: 30) {
            try sandbox.agentState() == "unlocked"
        }
        #expect(sandbox.agentLog.contains("latchkeyd: unlocked\n"), "\(sandbox.agentLog)")
        #expect(!sandbox.agentLog.contains(sandbox.password))
        var status = stat()
        #expect(stat(sandbox.keychainPath, &status) == 0 && status.st_uid == sandbox.uid && status.st_mode & 0o077 == 0)
    }

    @Test func aLoginWithoutAPasswordSaysTheKeychainStaysLocked() throws {
        // Autologin, a fingerprint, a FIDO2 key: nothing typed, so no PAM_AUTHTOK.
        let sandbox = try PAMSandbox(
            stack: """
                auth required pam_permit.so
                auth optional MODULE
                session optional MODULE
                """)
        try sandbox.createKeychain(passphrase: sandbox.password)
        try sandbox.startAgent()
        let login = try sandbox.pamtester(["authenticate", "open_session"])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(
            login.stdout == "pamtester: successfully authenticated\n"
                + "Latchkey: this login gave no password, so your keychain stays locked; unlock it with `latchkey unlock-keychain`.\n"
                + "pamtester: successfully opened a session\n",
            "\(login.stdout)")
        #expect(try sandbox.agentState() == "locked (not unlocked since opened)")
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/swtpm"), "needs swtpm"))
    func aLoginWithoutAPasswordUnlocksThroughTheTPMWhenEnrolled() throws {
        let tpm = try SoftwareTPM()
        let sandbox = try PAMSandbox(
            stack: """
                auth required pam_permit.so
                auth optional MODULE
                session optional MODULE
                """)
        sandbox.extraEnvironment = tpm.environment
        try tpm.share(withUser: sandbox.uid, group: sandbox.gid)  // The user's latchkey and latchkeyd use it.
        try sandbox.createKeychain(passphrase: sandbox.password)
        let enrolled = try sandbox.latchkey(
            "tpm", "enroll", "--unattended", "--pcrs", "7", "--passphrase-fd", "0", input: sandbox.password + "\n")
        #expect(enrolled.status == 0, "\(enrolled.stderr)")
        try sandbox.startAgent()
        let login = try sandbox.pamtester(["authenticate", "open_session"])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(
            login.stdout == "pamtester: successfully authenticated\npamtester: successfully opened a session\n",
            "\(login.stdout)")
        #expect(try sandbox.agentState() == "unlocked", "\(sandbox.agentLog)")
        #expect(sandbox.agentLog.contains("latchkeyd: unlocked through the TPM (unattended)"))
    }

    @Test func thePasswordIsInNoEnvironmentCommandLineFileOrLog() throws {
        let sandbox = try PAMSandbox(stack: Self.login)
        try sandbox.createKeychain(passphrase: sandbox.password)
        try sandbox.startAgent()
        guard let agent = sandbox.agent else { return }
        // The agent stopped: the module's child waits for its greeting, so the step can be looked at.
        kill(agent.pid, SIGSTOP)
        let pamtester = try sandbox.startPamtester(["authenticate", "open_session"], input: sandbox.password + "\n")
        // (The hand-over's child runs as root: the agent knows the login's unlock by it.)
        try waitUntil("pam_latchkey's child waits for the agent") { !PAMSandbox.children(of: pamtester.pid).isEmpty }
        var leaks: [String] = []
        let needle = Data(sandbox.password.utf8)
        for entry in (try FileManager.default.contentsOfDirectory(atPath: "/proc")) where pid_t(entry) != nil {
            for file in ["environ", "cmdline"] {
                guard let bytes = FileManager.default.contents(atPath: "/proc/\(entry)/\(file)") else { continue }
                if bytes.range(of: needle) != nil { leaks.append("/proc/\(entry)/\(file)") }
            }
        }
        kill(agent.pid, SIGCONT)
        try waitUntil("pamtester ends", seconds: 60) { !pamtester.isRunning }
        #expect(pamtester.exitStatus == 0)
        #expect(leaks.isEmpty, "\(leaks)")
        #expect(try sandbox.agentState() == "unlocked", "\(sandbox.agentLog)")
        for directory in [sandbox.home, sandbox.runtime, sandbox.work.path] {
            #expect(try PAMSandbox.filesHolding(needle, under: directory).isEmpty)
        }
        for log in ["/var/log/auth.log", "/var/log/syslog"] {
            guard let bytes = FileManager.default.contents(atPath: log) else { continue }
            #expect(bytes.range(of: needle) == nil, "\(log)")
        }
    }

    @Test func killingTheAgentDuringTheStepLosesNothing() throws {
        let sandbox = try PAMSandbox(stack: Self.login)
        try sandbox.createKeychain(passphrase: sandbox.password)
        try sandbox.startAgent()
        guard let agent = sandbox.agent else { return }
        kill(agent.pid, SIGSTOP)
        let pamtester = try sandbox.startPamtester(["authenticate", "open_session"], input: sandbox.password + "\n")
        // (The hand-over's child runs as root: the agent knows the login's unlock by it.)
        try waitUntil("pam_latchkey's child waits for the agent") { !PAMSandbox.children(of: pamtester.pid).isEmpty }
        kill(agent.pid, SIGKILL)
        try waitUntil("pamtester ends", seconds: 60) { !pamtester.isRunning }
        #expect(pamtester.exitStatus == 0, "the login goes on")
        sandbox.stopAgent()
        // The keychain is whole: its item is there, and the next login unlocks it.
        let info = try sandbox.latchkey("show-keychain-info")
        #expect(info.stdout.contains("items: 1\n"), "\(info.stdout)\(info.stderr)")
        #expect(try sandbox.unlocks(sandbox.password))
        try sandbox.startAgent()
        let login = try sandbox.pamtester(["authenticate", "open_session"], input: sandbox.password + "\n")
        #expect(login.status == 0)
        #expect(try sandbox.agentState() == "unlocked", "\(sandbox.agentLog)")
    }
}
