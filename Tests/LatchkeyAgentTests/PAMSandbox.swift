import Foundation
import Latchkey
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A throwaway user with a login password, pam_latchkey.so built from contrib/pam, a PAM service file in
/// /etc/pam.d that uses it, and (when started) the user's latchkeyd on `$XDG_RUNTIME_DIR/latchkey/agent.sock`.
/// Everything — the user (`userdel -r`), the service file, the directories — goes when the sandbox goes.
///
/// Needs root (useradd, /etc/pam.d), pamtester and a C compiler; `PAMSandbox.available` says whether they are.
final class PAMSandbox: @unchecked Sendable {
    // @unchecked: used by one test at a time; `agent` changes only in startAgent/stopAgent.
    static let pamtester = "/usr/bin/pamtester"
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static var available: Bool {
        geteuid() == 0 && FileManager.default.isExecutableFile(atPath: pamtester)
            && FileManager.default.isExecutableFile(atPath: "/usr/sbin/useradd")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/cc")
    }

    let name: String
    let password: String
    let uid: uid_t
    let gid: gid_t
    let home: String
    /// Root's own directory: the module, the agent's log, the PAM service's lines.
    let work = TemporaryDirectory()
    /// The user's XDG_RUNTIME_DIR (as pam_systemd makes it: the user's, mode 0700).
    let runtime: String
    let service: String
    var module: String { work.file("pam_latchkey.so") }
    var keychainPath: String { home + "/.local/share/latchkey/login.keychain" }
    var markerPath: String { home + "/.local/share/latchkey/.login-password-changed" }
    var agentLog: String { (try? String(contentsOfFile: work.file("agent.log"), encoding: .utf8)) ?? "" }
    private(set) var agent: SpawnedProcess?

    /// A user and a service whose stack is `stack`, where `MODULE` stands for pam_latchkey.so followed by
    /// `latchkey=<the built tool>` and `latchkeyd=<the built agent>` (the agent it vouches for),
    /// `SERVICE` for the service's own name and `HOME/` for the user's home.
    init(stack: String) throws {
        name = "lkpam" + String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)
        password = "login password " + String(UInt64.random(in: 1 << 40...1 << 48), radix: 36)
        home = "/tmp/\(name)-home"
        runtime = "/tmp/\(name)-run"
        service = "latchkey-test-\(name)"
        let added = try HelperProcess.run(
            "/usr/sbin/useradd", ["-m", "-d", home, "-s", "/usr/sbin/nologin", "-U", name])
        guard added.status == 0 else { throw Failure("useradd: \(added.stderr)") }
        guard let entry = getpwnam(name) else { throw Failure("no passwd entry for \(name)") }
        uid = entry.pointee.pw_uid
        gid = entry.pointee.pw_gid
        try setLoginPassword(password)
        try FileManager.default.createDirectory(
            atPath: runtime, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        guard chown(runtime, uid, gid) == 0 else { throw Failure("chown \(runtime)") }
        chmod(work.path, 0o755)  // The module is loaded by root, but the user's tools run from beside it.
        let built = try HelperProcess.run(Self.root.appendingPathComponent("script/build-pam").path, [module])
        guard built.status == 0 else { throw Failure("script/build-pam: \(built.stderr)") }
        let line =
            "\(module) latchkey=\(HelperProcess.product("latchkey")) latchkeyd=\(HelperProcess.product("latchkeyd"))"
        try Data(
            stack.replacingOccurrences(of: "MODULE", with: line).replacingOccurrences(of: "SERVICE", with: service)
                .replacingOccurrences(of: "HOME/", with: home + "/").utf8
        ).write(to: URL(fileURLWithPath: "/etc/pam.d/\(service)"))
    }

    deinit {
        stopAgent()
        unlink("/etc/pam.d/\(service)")
        // The user's processes first (an agent a test left), then the user and its home.
        _ = try? HelperProcess.run("/usr/bin/pkill", ["-KILL", "-u", name])
        _ = try? HelperProcess.run("/usr/sbin/userdel", ["-r", "-f", name])
        try? FileManager.default.removeItem(atPath: runtime)
        try? FileManager.default.removeItem(atPath: home)
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Sets the user's login password in /etc/shadow (chpasswd, as an administrator does).
    func setLoginPassword(_ new: String) throws {
        let set = try HelperProcess.run("/usr/sbin/chpasswd", [], input: Data("\(name):\(new)\n".utf8))
        guard set.status == 0 else { throw Failure("chpasswd: \(set.stderr)") }
    }

    /// Creates the user's login keychain with `passphrase` (the cheapest key derivation) and one item.
    func createKeychain(passphrase: String) throws {
        let keychain = try KeychainDatabase.create(
            at: keychainPath, passphrase: Passphrase(passphrase), keyDerivation: .minimum)
        _ = try keychain.add(
            NewItem(
                .genericPassword, attributes: [.service: .string("pam"), .account: .string("test")],
                data: Data("item secret".utf8)),
            caller: CallerIdentity(applicationIdentifier: "pam-test", accessGroups: ["pam-test"]))
        let owned = try HelperProcess.run("/bin/chown", ["-R", "\(uid):\(gid)", home + "/.local"])
        guard owned.status == 0 else { throw Failure("chown: \(owned.stderr)") }
    }

    /// Added to the environment of the user's programs (a software TPM's address).
    var extraEnvironment: [String: String] = [:]

    /// The environment of the user's programs.
    var userEnvironment: [String: String] {
        extraEnvironment.merging([
            "HOME": home, "XDG_RUNTIME_DIR": runtime, "PATH": "/usr/bin:/bin", "USER": name,
            "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(work.file("no-system-bus"))",
            "LATCHKEY_PINENTRY": work.file("no-pinentry"),
        ]) { _, new in new }
    }

    func asUser(_ program: String, _ arguments: [String]) -> [String] {
        ["--reuid=\(uid)", "--regid=\(gid)", "--clear-groups", program] + arguments
    }

    /// Runs a command of the latchkey tool as the user.
    func latchkey(_ arguments: String..., input: String? = nil) throws -> HelperProcess.Output {
        try HelperProcess.run(
            "/usr/bin/setpriv", asUser(HelperProcess.product("latchkey"), arguments), environment: userEnvironment,
            input: input.map { Data($0.utf8) })
    }

    /// Whether `passphrase` opens the keychain now (checked without the agent).
    func unlocks(_ passphrase: String) throws -> Bool {
        let checked = try latchkey("unlock-keychain", "--no-agent", "--passphrase-fd", "0", input: passphrase + "\n")
        guard checked.status == 0 || checked.status == 51 else {
            throw Failure("unlock-keychain --no-agent: \(checked.stderr)")
        }
        return checked.status == 0
    }

    /// The agent's lock state as `show-keychain-info` reports it ("agent: running (pid N), unlocked").
    func agentState() throws -> String {
        let info = try latchkey("show-keychain-info")
        let line = info.stdout.split(separator: "\n").first { $0.hasPrefix("agent: ") } ?? ""
        if let comma = line.lastIndex(of: ",") {
            return String(line[line.index(after: comma)...]).trimmingCharacters(in: .whitespaces)
        }
        return String(line)
    }

    var socketPath: String { runtime + "/latchkey/agent.sock" }

    /// Starts the user's latchkeyd (as the user) with `arguments` besides its usual ones, and waits until it
    /// accepts connections.
    func startAgent(_ arguments: [String] = []) throws {
        let process = try SpawnedProcess(
            "/usr/bin/setpriv",
            asUser(HelperProcess.product("latchkeyd"), ["--verbose", "--no-ssh-agent"] + arguments),
            environment: userEnvironment, log: work.file("agent.log"))
        agent = process
        try waitUntil("the agent listens") {
            guard process.isRunning else { throw Failure("latchkeyd ended: \(agentLog)") }
            return AgentStream.connect(path: socketPath) != nil
        }
    }

    func stopAgent() {
        agent?.stop()
        agent = nil
    }

    /// Runs pamtester as root for the user: `operations` in one PAM handle, `input` the answers it types.
    func pamtester(_ operations: [String], input: String = "") throws -> HelperProcess.Output {
        try HelperProcess.run(
            Self.pamtester, ["-v", "-E", "XDG_RUNTIME_DIR=\(runtime)", service, name] + operations,
            environment: ["PATH": "/usr/bin:/bin"], input: Data(input.utf8), timeout: 60)
    }

    /// Starts pamtester without waiting for it (a test that acts while the PAM step runs).
    func startPamtester(_ operations: [String], input: String) throws -> SpawnedProcess {
        let process = try SpawnedProcess(
            Self.pamtester, ["-v", "-E", "XDG_RUNTIME_DIR=\(runtime)", service, name] + operations,
            environment: ["PATH": "/usr/bin:/bin"], log: work.file("pamtester.log"), input: true)
        process.send(Data(input.utf8))
        return process
    }

    /// The regular files below `directory` that hold `needle` (sockets and the like are not read).
    static func filesHolding(_ needle: Data, under directory: String) throws -> [String] {
        var found: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let name = enumerator?.nextObject() as? String {
            let path = directory + "/" + name
            var status = stat()
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { continue }
            if try Data(contentsOf: URL(fileURLWithPath: path)).range(of: needle) != nil { found.append(path) }
        }
        return found
    }

    /// The pids of the children of process `parent` (pam_latchkey's forked children, of pamtester's).
    static func children(of parent: pid_t) -> [pid_t] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry in
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == parent ? pid : nil
        }
    }

    /// Whether `pid` is a zombie: an orphan nothing reaps where the machine's first process does not (a
    /// container's); under systemd it is reaped at once.
    static func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }
        return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
    }

    /// The pids of the user's processes other than the agent (pam_latchkey's children, the tools they run).
    func userProcesses() -> [pid_t] {
        let agentPid = agent.map { $0.pid }
        return ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { entry in
            guard let pid = pid_t(entry), pid != agentPid, !Self.isZombie(pid) else { return nil }
            var status = stat()
            guard stat("/proc/\(pid)", &status) == 0, status.st_uid == uid else { return nil }
            let command = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? ""
            return command.hasPrefix("setpriv") || command.hasPrefix("latchkeyd") ? nil : pid
        }
    }
}
