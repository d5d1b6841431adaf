import FoundationEssentials
import Latchkey
import LatchkeyPOSIX

/// The CLI's use of the agent: find it and start it on demand (item commands reach it through `CommandKeychain`).
enum AgentAccess {
    /// A connection to the agent serving `path`, or nil when none runs; `errSecWrPerm` when the socket found
    /// is not safe to send anything to (see `AgentLocation`).
    static func client(for path: String, context: CLIContext) throws -> AgentClient? {
        try AgentRouting.client(for: path, environment: context.environment)
    }

    /// The agent executable: beside this one, else on the PATH.
    static func agentExecutable(context: CLIContext) -> String? {
        // No /proc (or an unreadable link): the path this program was started by is the next best guess.
        let own = Processes.executablePath(of: CurrentProcess.id) ?? CommandLine.arguments[0]
        let beside = URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("latchkeyd").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        for directory in (context.environment["PATH"] ?? "").split(separator: ":") {
            let candidate = "\(directory)/latchkeyd"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Variables the agent must never start with: it gets the passphrase over its socket, once.
    static let secretVariables = [
        PassphraseSource.environmentVariable, "LATCHKEY_BACKUP_PASSPHRASE", "LATCHKEY_FILE_PASSPHRASE",
    ]

    /// Starts `latchkeyd` for `path` in its own session (detached from this terminal, holding none of this
    /// command's descriptors, without the passphrase variables) and waits for it to listen.
    static func start(for path: String, context: CLIContext) throws -> AgentClient {
        guard let executable = agentExecutable(context: context) else {
            throw CommandFailure(message: "latchkeyd was not found beside latchkey or on the PATH")
        }
        let environment = context.environment.filter { !secretVariables.contains($0.key) }
        let pid: Int32
        do {
            // The agent outlives this command: it must not keep any of its descriptors (a parent waiting for
            // this command's output, or for its end, would wait for the agent's).
            pid = try Spawn.start(
                executable, ["--keychain", path], environment: environment,
                options: Spawn.Options(newSession: true, closeInheritedDescriptors: true))
        } catch {
            throw CommandFailure(message: "cannot start \(executable): \(error)")
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let client = try client(for: path, context: context) { return client }
            if case .exited(let status)? = Spawn.poll(pid) {
                throw CommandFailure(
                    message: "latchkeyd exited at once (status \(status)); run it with --verbose to see why")
            }
            CurrentThread.sleep(for: .milliseconds(20))
        }
        throw CommandFailure(message: "latchkeyd did not start listening within 10 seconds")
    }
}
