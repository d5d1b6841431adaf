import Foundation
import Latchkey
#if canImport(Glibc)
import Glibc
#endif

/// The CLI's use of the agent: find it, start it on demand, and decide whether item commands go through it.
enum AgentAccess {
    /// A connection to the agent serving `path`, or nil when none runs.
    static func client(for path: String, context: CLIContext) -> AgentClient? {
        AgentClient.connect(keychainPath: URL(fileURLWithPath: path).standardizedFileURL.path, environment: context.environment)
    }

    /// The agent executable: beside this one, else on the PATH.
    static func agentExecutable(context: CLIContext) -> String? {
        // No /proc (or an unreadable link): the path this program was started by is the next best guess.
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let beside = URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("latchkeyd").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        for directory in (context.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(directory)/latchkeyd"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Starts `latchkeyd` for `path` in its own session (detached from this terminal) and waits for it.
    static func start(for path: String, context: CLIContext) throws -> AgentClient {
        guard let executable = agentExecutable(context: context) else {
            throw CommandFailure(message: "latchkeyd was not found beside latchkey or on the PATH")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        // The agent outlives this command: it must not keep any of its descriptors (a parent waiting for this
        // command's output, or for its end, would wait for the agent's).
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []  // No /proc: nothing to close.
        for fd in names.compactMap({ Int32($0) }) where fd > 2 { posix_spawn_file_actions_addclose(&actions, fd) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(0x80))  // POSIX_SPAWN_SETSID: its own session.
        let words: [String] = [executable, "--keychain", path]
        let argv = words.map { strdup($0) } + [nil]
        let envp = context.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        guard posix_spawn(&pid, executable, &actions, &attributes, argv, envp) == 0 else {
            throw CommandFailure(message: "cannot start \(executable)")
        }
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let client = client(for: path, context: context) { return client }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                throw CommandFailure(message: "latchkeyd exited at once (status \((status >> 8) & 0xFF)); run it with --verbose to see why")
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw CommandFailure(message: "latchkeyd did not start listening within 10 seconds")
    }
}

/// Where an item command's operations go: the agent (when it runs and this program is registered with it)
/// or the keychain opened here (unlocked only when an item needs it).
struct ItemStore {
    let backend: any KeychainBackend
    /// Unlocks the embedded keychain (asking for the passphrase); nil through the agent, which is unlocked
    /// or not by `unlock-keychain`.
    let unlock: (() throws -> Void)?

    static func open(_ arguments: ParsedArguments, context: CLIContext, group: String?) throws -> ItemStore {
        let path = context.keychainPath(arguments.positionals.first)
        // An agent that cannot answer its status (going away, an old protocol) is not used: the CLI opens the
        // keychain itself, with the same results and statuses.
        if let client = AgentAccess.client(for: path, context: context), (try? client.status().isRegistered) == true {
            return ItemStore(backend: AgentBackend(client: client), unlock: nil)
        }
        let keychain = try KeychainDatabase.open(at: path)
        let backend = DatabaseBackend(database: keychain, caller: commandLineCaller(group: group, environment: context.environment))
        return ItemStore(backend: backend) {
            try keychain.unlock(with: context.passphrase(arguments, prompt: "password to unlock \(arguments.positionals.first ?? "default"): "))
        }
    }

    /// Runs `body`; when the keychain here is locked for it, unlocks and runs it again.
    func run<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as KeychainError where error.status == .interactionNotAllowed && unlock != nil {
            try unlock!()
            return try body()
        }
    }
}
