import Foundation
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 50, points 6e and 6f: what pam_latchkey's children may keep of the login process, and how long they
/// may hold a login. The children run as the user, so the user can signal them; the root parent bounds them.
@Suite(.serialized, .dedicatedThreads, .enabled(if: PAMSandbox.available, "needs root, pamtester, useradd and cc"))
struct PAMChildBoundsTests {
    @Test func theToolInheritsNoDescriptorOfTheLoginProcess() throws {
        // The login process holds a root-only file as descriptor 9, not close-on-exec; the `latchkey` tool
        // the session step runs (here a script that looks) must not get it.
        let sandbox = try PAMSandbox(
            stack: """
                auth required pam_unix.so
                auth optional MODULE
                session optional MODULE create latchkey=HOME/descriptor-spy
                """)
        let secret = "root only " + String(UInt64.random(in: 1 << 40...1 << 48), radix: 36)
        let secretFile = sandbox.work.file("root-only")
        try Data(secret.utf8).write(to: URL(fileURLWithPath: secretFile))
        #expect(chmod(secretFile, 0o600) == 0)
        let spy = sandbox.home + "/descriptor-spy"
        // Which of 3-9 it holds (3 is the passphrase's pipe), and what reading 9 gives.
        try installScript(
            """
            #!/bin/sh
            for n in 3 4 5 6 7 8 9; do { true <&$n; } 2>/dev/null && printf '%s ' "$n"; done > "$HOME/spy.fds"
            cat <&9 > "$HOME/spy.out" 2> "$HOME/spy.err"
            echo "$?" > "$HOME/spy.status"
            """, at: spy)
        #expect(chown(spy, sandbox.uid, sandbox.gid) == 0)
        let log = try SyslogCapture(at: sandbox.work.file("log.sock"))
        let login = try sandbox.loggedPamtester(
            ["authenticate", "open_session"], input: sandbox.password + "\n", log: log, before: "exec 9< \(secretFile)")
        #expect(login.status == 0, "\(login.stdout)\(login.stderr)")
        let read = { (name: String) in (try? String(contentsOfFile: sandbox.home + "/" + name, encoding: .utf8)) ?? "" }
        #expect(read("spy.fds") == "3 ", "the tool held more than its passphrase's pipe")
        #expect(read("spy.out") == "", "the tool read the login process's root-only file")
        #expect(read("spy.status") == "2\n", "reading descriptor 9 should fail: \(read("spy.err"))")
        #expect(
            log.moduleLines == [
                "session: created the login keychain of \(sandbox.name)",
                "session: the keychain of \(sandbox.name) stays locked: no agent answers on the user's socket",
            ], "\(log.messages)")
    }

    /// What happened to a login whose child or tool the user stopped.
    struct StoppedRun {
        let name: String
        let took: Duration
        let status: Int32?
        let output: String
        let lines: [String]
        let child: pid_t
        let tool: pid_t
    }

    /// A session step that runs a tool that sleeps (`child_seconds=3`): once the tool runs, the user stops
    /// `victim(child, tool)` — the module's child, or the tool it runs.
    func loginWhileTheUserStops(_ victim: (_ child: pid_t, _ tool: pid_t) -> pid_t) throws -> StoppedRun {
        let sandbox = try PAMSandbox(
            stack: """
                auth required pam_unix.so
                auth optional MODULE
                session optional MODULE create child_seconds=3 latchkey=HOME/slow-tool
                """)
        try installScript("#!/bin/sh\nexec sleep 600\n", at: sandbox.home + "/slow-tool")
        #expect(chown(sandbox.home + "/slow-tool", sandbox.uid, sandbox.gid) == 0)
        let log = try SyslogCapture(at: sandbox.work.file("log.sock"))
        let output = sandbox.work.file("pamtester.out")
        let started = ContinuousClock.now
        let pamtester = try sandbox.startLoggedPamtester(
            ["authenticate", "open_session"], input: sandbox.password + "\n", log: log, output: output)
        var tool: pid_t = 0
        try waitUntil("the tool runs") {
            tool = sandbox.processes(named: "sleep").first ?? 0
            return tool != 0
        }
        let child = try #require(Self.parent(of: tool))
        let stopped = try sandbox.runAsUser("/bin/kill", ["-STOP", "\(victim(child, tool))"])
        #expect(stopped.status == 0, "\(stopped.stderr)")
        let deadline = ContinuousClock.now + .seconds(30)
        while pamtester.isRunning && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let took = ContinuousClock.now - started
        if pamtester.isRunning {
            // Held past any bound: let the stopped process go on (its alarm ends it) before failing.
            kill(victim(child, tool), SIGCONT)
            pamtester.stop(signal: SIGKILL)
        }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return StoppedRun(
            name: sandbox.name, took: took, status: pamtester.exitStatus, output: text, lines: log.moduleLines,
            child: child, tool: tool)
    }

    static func parent(of pid: pid_t) -> pid_t? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        // "pid (comm) S ppid ...".
        return stat[stat.index(after: close)...].split(separator: " ").dropFirst().first.flatMap { pid_t($0) }
    }

    /// The login returned within the bound and a margin, opened its session, and left no process of the user.
    func expectTheLoginWentOn(_ run: StoppedRun) {
        // Not a speed check: the bound is 3 s, and a held login waits for the 30 s this test allows.
        #expect(run.took < .seconds(13), "the login was held \(run.took)")
        #expect(run.status == 0)
        #expect(
            run.output.hasSuffix("pamtester: successfully authenticated\npamtester: successfully opened a session\n"),
            "\(run.output)")
        #expect(PAMSandbox.ends(run.child, within: .seconds(5)), "the module's child (pid \(run.child)) still runs")
        #expect(PAMSandbox.ends(run.tool, within: .seconds(5)), "the tool (pid \(run.tool)) still runs")
        #expect(
            run.lines == [
                "session: the child acting as \(run.name) did not end within 3 s (child_seconds): killed it and what it runs",
                "session: cannot create the login keychain of \(run.name): the child acting as the user did not end in time",
                "session: the keychain of \(run.name) stays locked: no agent answers on the user's socket",
            ], "\(run.lines)")
    }

    @Test func aChildStoppedByTheUserDoesNotHoldTheLogin() throws {
        expectTheLoginWentOn(try loginWhileTheUserStops { child, _ in child })
    }

    @Test func aToolStoppedByTheUserIsEndedWithTheChild() throws {
        expectTheLoginWentOn(try loginWhileTheUserStops { _, tool in tool })
    }
}
