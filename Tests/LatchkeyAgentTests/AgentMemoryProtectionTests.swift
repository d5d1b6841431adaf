import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The agent is not dumpable: another process of its own user can neither attach to it with ptrace nor
/// read its memory; and its core file size limit is zero.
@Suite(.dedicatedThreads) struct AgentMemoryProtectionTests {
    /// Asks to trace `pid` (PTRACE_SEIZE, which does not stop it) from a process running as `user`:
    /// "attached", or "refused <errno>". The tracer exits at once, which detaches it.
    func traceAttempt(_ pid: pid_t, as user: uid_t) throws -> String {
        let script = """
            import ctypes, sys
            libc = ctypes.CDLL(None, use_errno=True)
            libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
            if libc.ptrace(0x4206, int(sys.argv[1]), None, None) == 0:
                print("attached")
            else:
                print("refused", ctypes.get_errno())
            """
        let output = try HelperProcess.run(
            "/usr/bin/setpriv",
            ["--reuid=\(user)", "--regid=\(user)", "--clear-groups", "/usr/bin/python3", "-c", script, "\(pid)"],
            environment: ["PATH": "/usr/bin:/bin"])
        #expect(output.status == 0, "\(output.stderr)")
        return output.stdout
    }

    /// Reads the first byte of /proc/<pid>/environ as the user `setpriv` arguments name.
    func readEnvironment(of pid: pid_t, as user: [String]) throws -> HelperProcess.Output {
        try HelperProcess.run(
            "/usr/bin/setpriv", user + ["/usr/bin/head", "-c", "1", "/proc/\(pid)/environ"],
            environment: ["PATH": "/usr/bin:/bin"])
    }

    @Test(
        .enabled(
            if: getuid() == 0 && getpwnam("nobody") != nil, "running the agent and the tracer as nobody needs root"))
    func anotherProcessOfTheSameUserCannotTraceTheAgentAndItWritesNoCore() throws {
        let entry = try #require(getpwnam("nobody"))
        let nobody = entry.pointee.pw_uid
        let group = entry.pointee.pw_gid
        let directory = TemporaryDirectory()
        let keychain = directory.file("login.keychain")
        _ = try KeychainDatabase.create(at: keychain, passphrase: Passphrase("memory test"), keyDerivation: .minimum)
        try FileManager.default.createDirectory(
            atPath: directory.file("run"), withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700])
        for path in [directory.path, directory.file("run"), keychain, keychain + ".device-key"] {
            #expect(chown(path, nobody, group) == 0, "chown \(path)")
        }
        let asNobody = ["--reuid=\(nobody)", "--regid=\(nobody)", "--clear-groups"]

        // The control: an ordinary process of the same user can be traced, so a refusal below means something.
        let sleeper = try SpawnedProcess(
            "/usr/bin/setpriv", asNobody + ["/bin/sleep", "30"], environment: ["PATH": "/usr/bin:/bin"])
        defer { sleeper.stop(signal: SIGKILL) }
        // setpriv becomes sleep when it execs it.
        try waitUntil("setpriv to exec sleep") {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(sleeper.pid)/exe"))?.hasSuffix(
                "/sleep") == true
        }
        #expect(try traceAttempt(sleeper.pid, as: nobody) == "attached\n")
        #expect(try readEnvironment(of: sleeper.pid, as: asNobody).status == 0)

        let socket = directory.file("run/agent.sock")
        let agent = try SpawnedProcess(
            "/usr/bin/setpriv",
            asNobody + [HelperProcess.product("latchkeyd"), "--verbose", "--keychain", keychain, "--socket", socket],
            environment: [
                "PATH": "/usr/bin:/bin", "HOME": directory.path,
                "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + directory.file("none"),
            ],
            log: directory.file("agent.log"))
        defer { agent.stop() }
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket) {
            guard Date() < deadline, agent.isRunning else {
                Issue.record(
                    "the agent did not start: \((try? String(contentsOfFile: directory.file("agent.log"), encoding: .utf8)) ?? "")"
                )
                return
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        #expect(try traceAttempt(agent.pid, as: nobody) == "refused \(EPERM)\n")
        // Its memory is closed to the same user through /proc too.
        let environment = try readEnvironment(of: agent.pid, as: asNobody)
        #expect(environment.status != 0 && environment.stderr.contains("Permission denied"), "\(environment.stderr)")
        // And a crash could write no core file: the limit is zero, soft and hard.
        let limits = try String(contentsOfFile: "/proc/\(agent.pid)/limits", encoding: .utf8)
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }.map(String.init) ?? ""
        #expect(
            core.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"], "\(core)")
    }
}
