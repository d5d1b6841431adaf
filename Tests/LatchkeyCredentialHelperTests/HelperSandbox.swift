import Foundation
import Latchkey
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A throwaway home for one test: a keychain made with the cheapest key derivation, private HOME and XDG
/// directories, git without the system's configuration, an agent socket path where no agent runs unless the
/// test starts one, and the built helpers first on the PATH (so `credential.helper latchkey` finds
/// `git-credential-latchkey`). Every program runs in a session of its own, with no controlling terminal.
final class HelperSandbox: @unchecked Sendable {
    // @unchecked: used by one test at a time; `agent` changes only in startAgent/deinit.
    let directory = TemporaryDirectory()
    static let passphrase = "helper sandbox passphrase"
    var agent: SpawnedProcess?

    var keychainPath: String { directory.file("data/latchkey/login.keychain") }
    var socketPath: String { directory.file("run/agent.sock") }
    static var buildDirectory: String {
        URL(fileURLWithPath: HelperProcess.product("latchkey")).deletingLastPathComponent().path
    }
    static var git: String { HelperProcess.product("git-credential-latchkey") }
    static var docker: String { HelperProcess.product("docker-credential-latchkey") }

    /// The environment without a passphrase: a helper then needs the agent, or fails.
    var headless: [String: String] {
        [
            "HOME": directory.path, "XDG_DATA_HOME": directory.file("data"),
            "XDG_CONFIG_HOME": directory.file("config"),
            "LATCHKEY_KEYCHAIN": keychainPath, "LATCHKEY_AGENT_SOCKET": socketPath,
            "PATH": Self.buildDirectory + ":/usr/bin:/bin",
            "LANG": "C.UTF-8", "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
            "GIT_ASKPASS": directory.file("askpass"),
        ]
    }

    /// The environment with `LATCHKEY_PASSPHRASE`: helpers open the keychain themselves.
    var environment: [String: String] { headless.merging(["LATCHKEY_PASSPHRASE": Self.passphrase]) { _, new in new } }

    init(createKeychain: Bool = true) throws {
        // A helper refuses oversized input without reading it all: writing the rest must fail with EPIPE in
        // this process, not end it (children get SIGPIPE's default back: HelperProcess resets it).
        signal(SIGPIPE, SIG_IGN)
        if createKeychain {
            _ = try KeychainDatabase.create(
                at: keychainPath, passphrase: Passphrase(Self.passphrase), keyDerivation: .minimum)
        }
        for name in ["run", "config", "data"] {
            try FileManager.default.createDirectory(
                atPath: directory.file(name), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }
        // git's own test suite's askpass: what it was asked on standard error, "askpass-<word>" as the answer.
        let askpass =
            "#!/bin/sh\necho >&2 askpass: $*\nwhat=$(echo $1 | cut -d\" \" -f1 | tr A-Z a-z | tr -cd a-z)\necho \"askpass-$what\"\n"
        try installScript(askpass, at: directory.file("askpass"))
    }

    deinit { agent?.stop() }

    /// Runs `program` (HelperProcess gives it a session of its own: no controlling terminal, a prompt can
    /// only fail).
    func run(
        _ program: String, _ arguments: [String], input: String? = nil, environment: [String: String]? = nil,
        timeout: Double = 60
    ) throws -> HelperProcess.Output {
        try HelperProcess.run(
            program, arguments, environment: environment ?? self.environment,
            input: input.map { Data($0.utf8) }, timeout: timeout)
    }

    /// Runs the git helper with an operation and the protocol's lines.
    func gitHelper(_ operation: String, _ input: String, environment: [String: String]? = nil) throws
        -> HelperProcess.Output
    {
        try run(Self.git, [operation], input: input, environment: environment)
    }

    /// Runs the docker helper with an action and its input.
    func dockerHelper(_ action: String, _ input: String? = nil, environment: [String: String]? = nil) throws
        -> HelperProcess.Output
    {
        try run(Self.docker, [action], input: input, environment: environment)
    }

    /// `git credential <action>` with the helper as the only credential helper.
    func gitCredential(_ action: String, _ input: String, environment: [String: String]? = nil) throws
        -> HelperProcess.Output
    {
        try run(
            "/usr/bin/git", ["-c", "credential.helper=latchkey", "credential", action], input: input,
            environment: environment)
    }

    /// The internet passwords in the keychain, read in this process (every access group).
    func internetPasswords() throws -> [ItemResult] {
        let database = try KeychainDatabase.open(at: keychainPath)
        try database.unlock(with: Passphrase(Self.passphrase))
        do {
            return try database.copyMatching(
                ItemQuery(.internetPassword, limit: .all, returning: [.attributes, .data]),
                caller: CallerIdentity(applicationIdentifier: "tests", accessGroups: [CallerIdentity.wildcardGroup]))
        } catch KeychainError.itemNotFound {
            return []
        }
    }

    /// Starts latchkeyd on the sandbox's socket and waits until it accepts connections.
    func startAgent() throws {
        let environment = headless.merging([
            "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + directory.file("no-system-bus"),
            "LATCHKEY_PINENTRY": directory.file("no-pinentry"),
        ]) { _, new in new }
        let process = try SpawnedProcess(
            HelperProcess.product("latchkeyd"), ["--verbose"], environment: environment,
            log: directory.file("agent.log"))
        agent = process
        let deadline = Date().addingTimeInterval(10)
        while AgentStream.connect(path: socketPath) == nil {
            guard Date() < deadline, process.isRunning else { throw CocoaError(.executableLoad) }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// Runs `latchkey` with the passphrase in its environment.
    @discardableResult
    func latchkey(_ arguments: String...) throws -> HelperProcess.Output {
        let output = try run(HelperProcess.product("latchkey"), arguments)
        #expect(output.status == 0, "latchkey \(arguments): \(output.stderr)")
        return output
    }

    /// Registers a helper with the agent under its own name (application identifier and access group).
    func register(_ program: String) throws {
        let name = URL(fileURLWithPath: program).lastPathComponent
        let resolved = URL(fileURLWithPath: program).resolvingSymlinksInPath().path
        try latchkey("register-application", "--app-id", name, "--access-group", name, resolved)
    }
}

/// `key=value` lines ended by a newline each, as git writes a credential.
func lines(_ lines: String...) -> String { lines.map { $0 + "\n" }.joined() }
