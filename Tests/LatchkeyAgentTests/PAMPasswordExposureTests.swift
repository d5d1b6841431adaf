import Foundation
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 50, point 4: no other program of the user sees the login password pam_latchkey handles. Each test
/// runs the attack as it was reported, as the throwaway user, while a real pamtester login or password change
/// runs: a program polling /proc for the `latchkey` tool's descriptors and memory, and a program standing in
/// for latchkeyd on the agent's socket.
@Suite(.serialized, .dedicatedThreads, .enabled(if: PAMSandbox.available, "needs root, pamtester, useradd and cc"))
struct PAMPasswordExposureTests {
    /// What proc-snoop.py reported: the ways in that worked, and the processes of the user it looked at.
    struct SnoopReport {
        let lines: [String]
        /// Every line that says it got something (a descriptor, bytes, memory, a trace).
        var gains: [String] {
            lines.filter { !$0.hasPrefix("ready") && !$0.hasPrefix("saw ") && !$0.hasPrefix("done ") }
        }
        /// The names of the processes it looked at.
        var seen: Set<String> {
            Set(lines.filter { $0.hasPrefix("saw ") }.compactMap { $0.split(separator: " ").last.map(String.init) })
        }
    }

    /// Starts proc-snoop.py as the user, looking for `needles` in whatever memory it can read, and waits
    /// until it polls.
    static func startSnoop(_ sandbox: PAMSandbox, needles: [String]) throws -> (SpawnedProcess, String) {
        let report = sandbox.home + "/snoop.report"  // The user's program writes it.
        let hex = needles.map { Data($0.utf8).map { String(format: "%02x", $0) }.joined() }.joined(separator: ",")
        let snoop = try sandbox.startAsUser(
            "/usr/bin/python3", [TestTools.directory + "/proc-snoop.py", report, hex],
            log: sandbox.work.file("snoop.log"))
        try waitUntil("proc-snoop.py polls") {
            (try? String(contentsOfFile: report, encoding: .utf8))?.hasPrefix("ready") == true
        }
        return (snoop, report)
    }

    static func finish(_ snoop: SpawnedProcess, report: String) throws -> SnoopReport {
        snoop.stop()
        let text = try String(contentsOfFile: report, encoding: .utf8)
        return SnoopReport(lines: text.split(separator: "\n").map(String.init))
    }

    @Test func aProgramOfTheUserGetsNoPasswordAtAPasswordChange() throws {
        let sandbox = try PAMSandbox(stack: PAMModuleTests.login)
        try sandbox.createKeychain(passphrase: sandbox.password)
        let log = try SyslogCapture(at: sandbox.work.file("log.sock"))
        let new = "a new login password " + String(UInt64.random(in: 1 << 40...1 << 48), radix: 36)
        let (snoop, reportPath) = try Self.startSnoop(sandbox, needles: [sandbox.password, new])
        let changed = try sandbox.loggedPamtester(
            ["chauthtok(PAM_CHANGE_EXPIRED_AUTHTOK)"], input: "\(sandbox.password)\n\(new)\n\(new)\n", log: log)
        let report = try Self.finish(snoop, report: reportPath)
        #expect(changed.status == 0, "\(changed.stdout)\(changed.stderr)")
        #expect(report.gains.isEmpty, "the user's program got in: \(report.gains)")
        #expect(report.seen.contains("latchkey"), "it never saw the tool run: \(report.lines)")
        #expect(
            log.moduleLines == ["chauthtok: re-wrapped the keychain of \(sandbox.name) for the new password"],
            "\(log.messages)")
        #expect(try sandbox.unlocks(new))
        #expect(try !sandbox.unlocks(sandbox.password))
    }

    @Test func aProgramOfTheUserGetsNoPasswordAtTheFirstLogin() throws {
        let sandbox = try PAMSandbox(
            stack: """
                auth required pam_unix.so
                auth optional MODULE
                session optional MODULE create
                """)
        let log = try SyslogCapture(at: sandbox.work.file("log.sock"))
        let (snoop, reportPath) = try Self.startSnoop(sandbox, needles: [sandbox.password])
        let login = try sandbox.loggedPamtester(
            ["authenticate", "open_session"], input: sandbox.password + "\n", log: log)
        let report = try Self.finish(snoop, report: reportPath)
        #expect(login.status == 0, "\(login.stdout)\(login.stderr)")
        #expect(report.gains.isEmpty, "the user's program got in: \(report.gains)")
        #expect(report.seen.contains("latchkey"), "it never saw the tool run: \(report.lines)")
        #expect(
            log.moduleLines == [
                "session: created the login keychain of \(sandbox.name)",
                "session: the keychain of \(sandbox.name) stays locked: no agent answers on the user's socket",
            ], "\(log.messages)")
        #expect(try sandbox.unlocks(sandbox.password))
    }

    /// The stand-in's report once it has seen `connections` connections end.
    static func standInReport(_ path: String, connections: Int) throws -> [String] {
        try waitUntil("the stand-in saw \(connections) connections end") {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").filter { $0 == "closed" }.count >= connections
        }
        return try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    static let python = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path

    @Test func aStandInOnTheAgentsSocketGetsNoPassword() throws {
        let sandbox = try PAMSandbox(stack: PAMModuleTests.login)
        try sandbox.createKeychain(passphrase: sandbox.password)
        let log = try SyslogCapture(at: sandbox.work.file("log.sock"))
        let reportPath = sandbox.home + "/stand-in.report"  // The user's program writes it.
        // A root-owned interpreter, not dumpable, listening where the agent would: only what it runs tells.
        let standIn = try sandbox.startAsUser(
            "/usr/bin/python3", [TestTools.directory + "/stand-in-agent.py", sandbox.socketPath, reportPath, "plain"],
            log: sandbox.work.file("stand-in.log"))
        defer { standIn.stop() }
        try waitUntil("the stand-in listens") { FileManager.default.fileExists(atPath: reportPath) }
        let login = try sandbox.loggedPamtester(
            ["authenticate", "open_session"], input: sandbox.password + "\n", log: log)
        #expect(login.status == 0, "\(login.stdout)\(login.stderr)")
        #expect(
            login.stdout == "pamtester: successfully authenticated\npamtester: successfully opened a session\n",
            "\(login.stdout)")
        // The auth step and the session step each connected, read the greeting, and sent nothing.
        let report = try Self.standInReport(reportPath, connections: 2)
        #expect(report == ["ready \(standIn.pid)", "connection", "closed", "connection", "closed"], "\(report)")
        #expect(!report.joined().contains(Data(sandbox.password.utf8).map { String(format: "%02x", $0) }.joined()))
        let refused =
            "the process that answers on the agent's socket of \(sandbox.name) (pid \(standIn.pid)) is not an agent "
            + "this module vouches for: it runs \(Self.python), not \(HelperProcess.product("latchkeyd")); "
            + "the password was not sent"
        #expect(
            log.moduleLines == [
                "auth: \(refused)", "session: \(refused)",
                "session: the keychain of \(sandbox.name) stays locked: the process that answers on the agent's socket "
                    + "is not an agent this module vouches for; the password was not sent",
            ], "\(log.messages)")
    }

    @Test func aStandInThatRunsTheAgentAfterListeningGetsNoPassword() throws {
        // The listener keeps its socket, forks a child that accepts, and runs the real latchkeyd: SO_PEERCRED
        // names latchkeyd (not dumpable, root's executable), while the child holds every connection.
        let sandbox = try PAMSandbox(stack: PAMModuleTests.login)
        try sandbox.createKeychain(passphrase: sandbox.password)
        let log = try SyslogCapture(at: sandbox.work.file("log.sock"))
        let reportPath = sandbox.home + "/stand-in.report"  // The user's program writes it.
        let elsewhere = sandbox.runtime + "/elsewhere"
        #expect(mkdir(elsewhere, 0o700) == 0 && chown(elsewhere, sandbox.uid, sandbox.gid) == 0)
        let latchkeyd = HelperProcess.product("latchkeyd")
        let standIn = try sandbox.startAsUser(
            "/usr/bin/python3",
            [
                TestTools.directory + "/stand-in-agent.py", sandbox.socketPath, reportPath, "exec-agent", latchkeyd,
                elsewhere,
            ],
            log: sandbox.work.file("stand-in.log"))
        defer { standIn.stop() }
        try waitUntil("the stand-in's child serves beside latchkeyd") {
            FileManager.default.fileExists(atPath: reportPath)
        }
        let ready = try String(contentsOfFile: reportPath, encoding: .utf8)
        let child = try #require(Int32(ready.dropFirst("ready ".count).trimmingCharacters(in: .newlines)))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(standIn.pid)/exe") == latchkeyd)
        let login = try sandbox.loggedPamtester(
            ["authenticate", "open_session"], input: sandbox.password + "\n", log: log)
        #expect(login.status == 0, "\(login.stdout)\(login.stderr)")
        let report = try Self.standInReport(reportPath, connections: 2)
        #expect(report == ["ready \(child)", "connection", "closed", "connection", "closed"], "\(report)")
        let refused =
            "the process that answers on the agent's socket of \(sandbox.name) (pid \(child)) is not an agent "
            + "this module vouches for: it runs \(Self.python), not \(latchkeyd); the password was not sent"
        #expect(
            log.moduleLines == [
                "auth: \(refused)", "session: \(refused)",
                "session: the keychain of \(sandbox.name) stays locked: the process that answers on the agent's socket "
                    + "is not an agent this module vouches for; the password was not sent",
            ], "\(log.messages)")
    }
}
