import Foundation
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

@testable import Latchkey
@testable import LatchkeyEngine

#if canImport(Glibc)
    import Glibc
#endif

/// What the README promises about the agent and no other test exercised: the command line switching to the
/// agent once registered, the agent's key hygiene, a client falling back when its agent goes away, the
/// SecItem functions through the agent, LATCHKEY_ACCESS_GROUPS, the runtime directory's mode, the systemd
/// units.
@Suite(.serialized, .dedicatedThreads) struct AgentPromisesTests {
    @Test func theCommandLineUsesTheAgentOnceRegisteredAndStopsWhenUnregistered() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        let latchkey = URL(fileURLWithPath: HelperProcess.product("latchkey")).resolvingSymlinksInPath().path
        #expect(try sandbox.cli("add-generic-password", "-a", "alice", "-s", "mail", "-w", "hunter2").status == 0)
        // Without the passphrase and unregistered, the command has nothing to unlock with.
        let find = ["find-generic-password", "-s", "mail", "-w"]
        let before = try HelperProcess.run(HelperProcess.product("latchkey"), find, environment: sandbox.environment)
        #expect(before.status == 36)
        #expect(
            before.stderr.hasPrefix(
                "latchkey: find-generic-password: User interaction is not allowed. (no terminal to prompt on"))

        let register = try sandbox.cli("register-application", "--wildcard", latchkey)
        #expect(
            register.stdout == "registered \(latchkey) as latchkey with access groups latchkey, *\n",
            "\(register.stderr)")
        let listing = try HelperProcess.run(
            HelperProcess.product("latchkey"), ["list-applications"], environment: sandbox.environment)
        #expect(listing.stdout.hasPrefix("latchkey [\"latchkey\", \"*\"] \(latchkey) ("), "\(listing.stderr)")
        // Registered: the agent answers, no passphrase needed.
        let through = try HelperProcess.run(HelperProcess.product("latchkey"), find, environment: sandbox.environment)
        #expect(through.stdout == "hunter2\n", "\(through.stderr)")
        // doctor says which agent serves the keychain, and skips (without failing) what needs the passphrase.
        let doctor = try HelperProcess.run(
            HelperProcess.product("latchkey"), ["doctor"], environment: sandbox.environment)
        #expect(doctor.status == 0, "\(doctor.stdout)")
        #expect(
            doctor.stdout.contains("ok       agent pid \(sandbox.agent?.pid ?? 0) serves it (unlocked)\n"),
            "\(doctor.stdout)")
        #expect(doctor.stdout.contains("skipped  integrity: it needs the passphrase"))
        #expect(
            try HelperProcess.run(
                HelperProcess.product("latchkey"), ["add-generic-password", "-a", "bob", "-s", "mail", "-w", "pw"],
                environment: sandbox.environment
            ).status == 0)

        #expect(try sandbox.cli("unregister-application", latchkey).status == 0)
        let after = try HelperProcess.run(HelperProcess.product("latchkey"), find, environment: sandbox.environment)
        #expect(after.status == 36, "back to embedded mode, which needs the passphrase")
        // Unregistered again: the agent does not list the registrations to it, and without the passphrase the
        // command cannot read them itself.
        let unregistered = try HelperProcess.run(
            HelperProcess.product("latchkey"), ["list-applications"], environment: sandbox.environment)
        #expect(unregistered.status == 36)
        #expect(unregistered.stdout == "")
    }

    /// The process's writable memory, region by region, searched for `needle` (as root, which may read a
    /// process that is not dumpable).
    func memoryHolds(_ pid: pid_t, _ needle: Data) throws -> Bool {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        let memory = open("/proc/\(pid)/mem", O_RDONLY)
        guard memory >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(memory) }
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("rw") else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard bounds.count == 2 else { continue }
            var region = [UInt8](repeating: 0, count: Int(bounds[1] - bounds[0]))
            let count = pread(memory, &region, region.count, off_t(bounds[0]))
            guard count > 0 else { continue }
            if Data(region[0..<count]).range(of: needle) != nil { return true }
        }
        return false
    }

    @Test(.enabled(if: getuid() == 0, "reading another process's memory needs root"))
    func theAgentsKeysAreInLockedMemoryAndGoneOnceItLocks() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        let pid = try #require(sandbox.agent?.pid)
        // The class key of "when unlocked" items, from the keybag, with the passphrase.
        let keychain = try KeychainDatabase.open(at: sandbox.keychainPath)
        let material = try KeychainDatabase.openKeybag(
            try keychain.readKeyMeta(), passphrase: Passphrase(AgentSandbox.passphrase))
        let classKey = try #require(material.classKeys[.whenUnlocked]).withUnsafeBytes { Data($0) }
        #expect(try !memoryHolds(pid, classKey), "not before the first unlock")

        try sandbox.unlock()
        #expect(try memoryHolds(pid, classKey), "the search finds the key while the agent holds it")
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let locked = status.split(separator: "\n").first { $0.hasPrefix("VmLck:") }.map {
            $0.split(separator: " ", omittingEmptySubsequences: true)[1]
        }
        #expect(Int(locked ?? "0") ?? 0 > 0, "the keys' pages are locked against swapping: \(locked ?? "-") kB")

        #expect(try sandbox.cli("lock-keychain").status == 0)
        #expect(try !memoryHolds(pid, classKey), "wiped when the agent locks")
        try sandbox.unlock()
        #expect(try memoryHolds(pid, classKey))
        // SIGTERM: the keys are wiped before the agent exits (it says so), and it exits cleanly.
        kill(pid, SIGTERM)
        try waitUntil("the agent to end") { !(sandbox.agent?.isRunning ?? false) }
        #expect(sandbox.agentLog.hasSuffix("latchkeyd: keys wiped\n"))
    }

    @Test func aClientWhoseAgentGoesAwayFallsBackInTheSameProcess() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        try sandbox.registerClients()
        #expect(try sandbox.client("a", "set", "s", "k", "v") == "ok\n")
        let log = sandbox.directory.file("twice.log")
        let trigger = sandbox.directory.file("go")
        let client = try SpawnedProcess(
            HelperProcess.product("latchkey-test-client-a"), ["get-twice", "s", "k", trigger],
            environment: sandbox.withPassphrase, log: log)
        try waitUntil("the first read") { sandbox.file(log) == "v\n" }
        sandbox.stop(signal: SIGKILL)
        #expect(FileManager.default.createFile(atPath: trigger, contents: nil))
        try waitUntil("the second read") { !client.isRunning }
        #expect(sandbox.file(log) == "v\nv\n", "the same answer, from the keychain opened in the process")
    }

    @Test func theSecItemFunctionsGoThroughTheAgent() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        try sandbox.registerClients()
        // No passphrase in the clients' environment: only the agent can answer.
        #expect(try sandbox.client("a", "secitem-set", "api", "token", "t0k3n") == "SecItemAdd 0\n")
        #expect(try sandbox.client("a", "secitem-set", "api", "token", "again") == "SecItemAdd -25299\n")
        #expect(try sandbox.client("a", "secitem-get", "api", "token") == "SecItemCopyMatching 0 t0k3n\n")
        #expect(
            try sandbox.client("b", "secitem-get", "api", "token") == "SecItemCopyMatching -25300 -\n", "another group")
        #expect(try sandbox.cli("lock-keychain").status == 0)
        #expect(try sandbox.client("a", "secitem-get", "api", "token") == "SecItemCopyMatching -25308 -\n")
    }

    @Test func accessGroupsFromTheEnvironmentInEmbeddedMode() throws {
        let sandbox = try AgentSandbox()  // No agent runs: embedded mode.
        var shared = sandbox.withPassphrase
        shared["LATCHKEY_ACCESS_GROUPS"] = "com.example.shared, com.example.other"
        #expect(try sandbox.client("a", "shared-get", "s", "k", "com.example.shared", environment: shared) == "<nil>\n")
        #expect(try sandbox.client("a", "shared-get", "s", "k", "com.example.other", environment: shared) == "<nil>\n")
        #expect(
            try sandbox.client("a", "shared-get", "s", "k", "com.example.shared", environment: sandbox.withPassphrase)
                == "error -34018 caller latchkey-test-client-a is not entitled to access group com.example.shared\n")
    }

    @Test func theAgentMakesItsDirectoryInTheRuntimeDirectoryPrivate() throws {
        let sandbox = try AgentSandbox()
        let runtime = sandbox.directory.file("xdg-runtime")
        try FileManager.default.createDirectory(
            atPath: runtime, withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700])
        var environment = sandbox.environment.merging(sandbox.agentEnvironment) { _, new in new }
        environment[AgentLocation.socketVariable] = nil
        environment["XDG_RUNTIME_DIR"] = runtime
        let agent = try SpawnedProcess(HelperProcess.product("latchkeyd"), [], environment: environment)
        defer { agent.stop() }
        let socket = runtime + "/latchkey/agent.sock"
        try waitUntil("the socket") { FileManager.default.fileExists(atPath: socket) }
        #expect(try permissions(runtime + "/latchkey") == 0o700)
        #expect(try permissions(socket) == 0o600)
    }

    @Test(
        .enabled(
            if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"),
            "systemd-analyze is not installed"))
    func theSystemdUnitsVerify() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let home = TemporaryDirectory()
        try FileManager.default.createDirectory(
            atPath: home.file("run"), withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700])
        // The service starts /usr/local/bin/latchkeyd, root's (pam_latchkey's default agent); the copy verified
        // here starts the built one instead, which is all that differs (verify wants the executable to exist).
        let shipped = try String(
            contentsOf: root.appendingPathComponent("contrib/systemd/latchkeyd.service"), encoding: .utf8)
        #expect(shipped.contains("\nExecStart=/usr/local/bin/latchkeyd "))
        try Data(
            shipped.replacingOccurrences(
                of: "\nExecStart=/usr/local/bin/latchkeyd ", with: "\nExecStart=\(HelperProcess.product("latchkeyd")) "
            ).utf8
        ).write(to: URL(fileURLWithPath: home.file("latchkeyd.service")))
        // The socket unit beside it, so that verify finds this service by its name, not the shipped one.
        try FileManager.default.copyItem(
            atPath: root.appendingPathComponent("contrib/systemd/latchkeyd.socket").path,
            toPath: home.file("latchkeyd.socket"))
        let units = [home.file("latchkeyd.socket"), home.file("latchkeyd.service")]
        let output = try HelperProcess.run(
            "/usr/bin/systemd-analyze", ["--user", "verify"] + units,
            environment: ["HOME": home.path, "XDG_RUNTIME_DIR": home.file("run"), "PATH": "/usr/bin:/bin"])
        #expect(output.status == 0)
        #expect(output.stderr == "")
    }
}

func permissions(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}
