import Foundation
import Latchkey
import LatchkeyProtocol
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A keychain, an agent serving it on a private socket, and the environment clients need to find both.
/// The agent is stopped by its pid when the sandbox goes.
public final class AgentSandbox: @unchecked Sendable {
    // @unchecked: used by one test at a time; `agent` changes only in start/stop.
    public let directory = TemporaryDirectory()
    public static let passphrase = "agent sandbox passphrase"
    public var agent: SpawnedProcess?
    public var agentLog: String { (try? String(contentsOfFile: directory.file("agent.log"), encoding: .utf8)) ?? "" }

    public var keychainPath: String { directory.file("data/latchkey/login.keychain") }
    public var socketPath: String { directory.file("run/agent.sock") }

    /// What clients get: no passphrase (so they cannot fall back silently), the agent's socket.
    public var environment: [String: String] {
        [
            "HOME": directory.path, "XDG_DATA_HOME": directory.file("data"),
            "XDG_CONFIG_HOME": directory.file("config"),
            "LATCHKEY_KEYCHAIN": keychainPath, "LATCHKEY_AGENT_SOCKET": socketPath, "PATH": "/usr/bin:/bin",
        ]
    }

    public var withPassphrase: [String: String] {
        environment.merging(["LATCHKEY_PASSPHRASE": Self.passphrase]) { _, new in new }
    }

    /// What the agent gets besides `environment`: by default a system bus address where no bus listens, so
    /// no test reaches the machine's own logind (the lock-on-sleep tests point it at their private bus), and
    /// a pinentry that does not exist, so no test opens the machine's own dialog (the presence tests give it
    /// a scripted one).
    public lazy var agentEnvironment: [String: String] = [
        "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + directory.file("no-system-bus"),
        "LATCHKEY_PINENTRY": directory.file("no-pinentry"),
    ]

    /// The user the agent and the command line run as, when not the test's own (an attack that must come from
    /// an unprivileged user of its own: the agent then belongs to that user too).
    public let user: (uid: uid_t, gid: gid_t)?

    public init(user: (uid: uid_t, gid: gid_t)? = nil) throws {
        self.user = user
        _ = try KeychainDatabase.create(
            at: keychainPath, passphrase: Passphrase(Self.passphrase), keyDerivation: .minimum)
        try FileManager.default.createDirectory(
            atPath: directory.file("run"), withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        if let user {
            let owned = try HelperProcess.run("/bin/chown", ["-R", "\(user.uid):\(user.gid)", directory.path])
            #expect(owned.status == 0, "\(owned.stderr)")
        }
    }

    /// `executable` with `arguments`, run as the sandbox's user (through setpriv) when it has one.
    public func asUser(_ executable: String, _ arguments: [String]) -> (String, [String]) {
        guard let user else { return (executable, arguments) }
        return (
            "/usr/bin/setpriv",
            ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", executable] + arguments
        )
    }

    deinit { stop() }

    /// Starts latchkeyd and waits until it accepts connections.
    public func start() throws {
        try start(HelperProcess.product("latchkeyd"), ["--verbose"])
    }

    /// Starts `executable` (latchkeyd, or a launcher of it) and waits until the socket accepts connections.
    public func start(_ executable: String, _ arguments: [String]) throws {
        let (program, words) = asUser(executable, arguments)
        let process = try SpawnedProcess(
            program, words, environment: environment.merging(agentEnvironment) { _, new in new },
            log: directory.file("agent.log"))
        agent = process
        let deadline = Date().addingTimeInterval(10)
        while AgentStream.connect(path: socketPath) == nil {
            guard Date() < deadline, process.isRunning else { throw CocoaError(.executableLoad) }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// Stops the agent: SIGTERM (it wipes its keys) or SIGKILL.
    public func stop(signal: Int32 = SIGTERM) {
        agent?.stop(signal: signal)
        agent = nil
    }

    @discardableResult
    public func cli(_ arguments: String...) throws -> HelperProcess.Output { try cli(arguments) }

    /// `cli` with the arguments in an array.
    @discardableResult
    public func cli(_ arguments: [String]) throws -> HelperProcess.Output {
        let (program, words) = asUser(HelperProcess.product("latchkey"), arguments)
        return try HelperProcess.run(program, words, environment: withPassphrase)
    }

    public func unlock() throws {
        let output = try cli("unlock-keychain")
        #expect(output.status == 0, "\(output.stderr)")
    }

    /// Runs a test client ("a" or "b", or a copy at `path`) with the clients' environment.
    public func client(
        _ name: String, _ arguments: String..., path: String? = nil, environment: [String: String]? = nil
    ) throws -> String {
        let (program, words) = asUser(path ?? HelperProcess.product("latchkey-test-client-\(name)"), arguments)
        return try HelperProcess.run(program, words, environment: environment ?? self.environment).stdout
    }

    public func register(_ path: String, appID: String, groups: [String]) throws {
        let (program, words) = asUser(
            HelperProcess.product("latchkey"),
            ["register-application", "--app-id", appID] + groups.flatMap { ["--access-group", $0] } + [path])
        let output = try HelperProcess.run(program, words, environment: withPassphrase)
        #expect(output.status == 0, "\(output.stderr)")
    }

    /// Registers the two test clients under their own names (application identifier and access group
    /// "latchkey-test-client-a" or "-b": what each is called in embedded mode), so the agent serves them.
    public func registerClients() throws {
        for name in ["a", "b"] {
            try register(
                Self.clientPath(name), appID: "latchkey-test-client-\(name)", groups: ["latchkey-test-client-\(name)"])
        }
    }

    /// The contents of a file ("" when it is missing).
    public func file(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    public static func clientPath(_ name: String) -> String {
        URL(fileURLWithPath: HelperProcess.product("latchkey-test-client-\(name)")).resolvingSymlinksInPath().path
    }
}
