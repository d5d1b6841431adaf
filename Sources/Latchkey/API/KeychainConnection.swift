import Foundation
import Synchronization

/// Which keychain a `Keychain` value uses, for which application, and how it is unlocked.
///
/// The default is the default keychain (`KeychainLocation.defaultPath()`: `LATCHKEY_KEYCHAIN`, else
/// `$XDG_DATA_HOME/latchkey/login.keychain`). When the Latchkey agent (`latchkeyd`) serves it, operations
/// go through the agent, which identifies this program and grants it its registered access groups; when no
/// agent runs (or it goes away), the keychain is opened in this process and unlocked once with the
/// passphrase from `PassphraseSource.automatic()` (`LATCHKEY_PASSPHRASE` if set, else a terminal prompt).
/// If the file does not exist, the first embedded operation creates it with that passphrase (asking twice
/// at a prompt).
///
/// ```swift
/// let tokens = Keychain(service: "com.example.api")                       // the default
/// let custom = Keychain(service: "com.example.api",
///                       connection: .embedded(path: "/srv/app/app.keychain", passphrase: .keyFile("/run/secrets/kc")))
/// ```
public struct KeychainConnection: Sendable {
    enum Kind: Sendable {
        case embedded(path: String, passphrase: PassphraseSource, applicationIdentifier: String, useAgent: Bool)
        case database(KeychainDatabase, applicationIdentifier: String)
        case backend(any KeychainBackend)
    }

    let kind: Kind

    /// The embedded default keychain, unlocked from `PassphraseSource.automatic()`.
    public static var `default`: KeychainConnection { .embedded() }

    /// A keychain file, served by the agent when it runs (`useAgent`), else opened in this process. Every
    /// `Keychain` using the same path shares one agent connection or one open, unlocked handle.
    public static func embedded(
        path: String = KeychainLocation.defaultPath(), passphrase: PassphraseSource = .automatic(),
        applicationIdentifier: String = defaultApplicationIdentifier, useAgent: Bool = true
    ) -> KeychainConnection {
        KeychainConnection(kind: .embedded(path: path, passphrase: passphrase, applicationIdentifier: applicationIdentifier,
                                           useAgent: useAgent))
    }

    /// A keychain you opened yourself (or an in-memory one), used as `applicationIdentifier`.
    public static func database(_ database: KeychainDatabase, applicationIdentifier: String = defaultApplicationIdentifier)
        -> KeychainConnection
    {
        KeychainConnection(kind: .database(database, applicationIdentifier: applicationIdentifier))
    }

    /// Any backend of the four dictionary operations (on Apple platforms, the system's `SecItem…`).
    public static func backend(_ backend: any KeychainBackend) -> KeychainConnection {
        KeychainConnection(kind: .backend(backend))
    }

    /// `LATCHKEY_APPLICATION_ID` when set, else the bundle identifier, else the process name.
    public static var defaultApplicationIdentifier: String {
        if let id = ProcessInfo.processInfo.environment["LATCHKEY_APPLICATION_ID"], !id.isEmpty { return id }
        return Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
    }

    /// The backend for a `Keychain` that names `accessGroup`. A `.database` connection grants it (you opened
    /// the database; you decide). The embedded default does not: the application holds its identifier's
    /// group and `LATCHKEY_ACCESS_GROUPS`, exactly what the agent grants a program registered with the same
    /// identifier and groups — so results and statuses are the same with and without the agent.
    func backend(accessGroup: String?) throws(KeychainError) -> any KeychainBackend {
        if case .database = kind { return try backend(accessGroups: accessGroup.map { [$0] } ?? []) }
        return try backend(accessGroups: [])
    }

    /// The groups `LATCHKEY_ACCESS_GROUPS` lists (comma-separated): the application's entitlements beyond
    /// its own identifier's group, in embedded mode.
    public static var defaultAccessGroups: [String] {
        (ProcessInfo.processInfo.environment["LATCHKEY_ACCESS_GROUPS"] ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The backend for a caller holding the application's own group, plus `accessGroups` (and, in embedded
    /// mode, `LATCHKEY_ACCESS_GROUPS`).
    public func backend(accessGroups: [String]) throws(KeychainError) -> any KeychainBackend {
        switch kind {
        case .backend(let backend):
            return backend
        case .database(let database, let applicationIdentifier):
            return DatabaseBackend(database: database, caller: Self.caller(applicationIdentifier, accessGroups))
        case .embedded(let path, let passphrase, let applicationIdentifier, let useAgent):
            let embedded = EmbeddedBackend(
                path: path, passphrase: passphrase,
                caller: Self.caller(applicationIdentifier, Self.defaultAccessGroups + accessGroups))
            return useAgent ? AutomaticBackend(path: path, embedded: embedded) : embedded
        }
    }

    /// The lock state: the agent's when it serves the keychain, else this process's handle.
    public func lockState() throws(KeychainError) -> LockState {
        switch kind {
        case .backend: throw KeychainError(.unimplemented, "a custom backend has no lock state")
        case .database(let database, _): return database.lockState
        case .embedded(let path, let passphrase, _, let useAgent):
            if useAgent, let client = try AgentClients.shared.client(for: path) { return try client.status().lockState }
            return try EmbeddedKeychains.shared.database(path: path, passphrase: passphrase).lockState
        }
    }

    /// Waits until data protected "after first unlock" is available (the keychain has been unlocked since
    /// it was opened), checking every 100 ms, or throws `errSecInteractionNotAllowed` after `timeout`.
    public func waitUntilProtectedDataAvailable(timeout: Duration) async throws(KeychainError) {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while true {
            if try lockState().isProtectedDataAvailable { return }
            guard clock.now < deadline else {
                throw KeychainError(.interactionNotAllowed, "the keychain was not unlocked within \(timeout)")
            }
            do {
                try await Task.sleep(for: .milliseconds(100))
            } catch {
                throw KeychainError(.userCanceled, "cancelled while waiting for the keychain to be unlocked")
            }
        }
    }

    /// Opens (and unlocks) the keychain now instead of at the first operation, so a wrong passphrase or a
    /// missing file shows up at start-up. Returns the database for embedded and database connections.
    @discardableResult
    public func open() throws(KeychainError) -> KeychainDatabase? {
        switch kind {
        case .backend: return nil
        case .database(let database, _): return database
        case .embedded(let path, let passphrase, _, _):
            return try EmbeddedKeychains.shared.database(path: path, passphrase: passphrase)
        }
    }

    private static func caller(_ applicationIdentifier: String, _ accessGroups: [String]) -> CallerIdentity {
        var groups = [applicationIdentifier]
        for group in accessGroups where !groups.contains(group) { groups.append(group) }
        return CallerIdentity(applicationIdentifier: applicationIdentifier, accessGroups: groups)
    }
}

/// The keychain files this process has opened in embedded mode, each opened and unlocked once.
final class EmbeddedKeychains: Sendable {
    static let shared = EmbeddedKeychains()
    private let open = Mutex<[String: KeychainDatabase]>([:])

    func database(path: String, passphrase: PassphraseSource) throws(KeychainError) -> KeychainDatabase {
        let key = URL(fileURLWithPath: path).standardizedFileURL.path
        if let cached = open.withLock({ $0[key] }) { return cached }
        // Opening may prompt and runs Argon2id: done outside the lock; a racing opener's handle is dropped.
        let database = try Self.openOrCreate(path: key, passphrase: passphrase)
        return open.withLock { opened in
            if let existing = opened[key] { return existing }
            opened[key] = database
            return database
        }
    }

    /// Whether `path` is open in this process.
    func isOpen(path: String) -> Bool {
        let key = URL(fileURLWithPath: path).standardizedFileURL.path
        return open.withLock { $0[key] != nil }
    }

    /// Forgets every handle (for tests that delete keychain files).
    func removeAll() { open.withLock { $0.removeAll() } }

    private static func openOrCreate(path: String, passphrase: PassphraseSource) throws(KeychainError) -> KeychainDatabase {
        if FileSystem.exists(path) {
            let database = try KeychainDatabase.open(at: path)
            try database.unlock(with: try passphrase.read(prompt: "Passphrase for keychain \(path): "))
            return database
        }
        let chosen = try passphrase.read(prompt: "New passphrase for keychain \(path): ")
        if passphrase == .prompt {
            let again = try passphrase.read(prompt: "Repeat the new passphrase: ")
            guard again == chosen else { throw KeychainError.param("the two passphrases differ") }
        }
        do {
            return try KeychainDatabase.create(at: path, passphrase: chosen)
        } catch {
            // Another process created it meanwhile: open theirs.
            guard error.status == .duplicateKeychain else { throw error }
            let database = try KeychainDatabase.open(at: path)
            try database.unlock(with: chosen)
            return database
        }
    }
}

/// The dictionary operations on a keychain opened in this process (opened and unlocked on first use).
struct EmbeddedBackend: KeychainBackend {
    let path: String
    let passphrase: PassphraseSource
    let caller: CallerIdentity

    func backend() throws(KeychainError) -> DatabaseBackend {
        // The identifier may come from the program's file name: never let a name grant the wildcard group.
        try CallerIdentity.validate(name: caller.applicationIdentifier, as: "the application identifier")
        return DatabaseBackend(database: try EmbeddedKeychains.shared.database(path: path, passphrase: passphrase), caller: caller)
    }

    /// Whether this process has the keychain open already.
    var isOpen: Bool { EmbeddedKeychains.shared.isOpen(path: path) }

    func add(_ attributes: [String: Any]) throws(KeychainError) -> Any? { try backend().add(attributes) }
    func copyMatching(_ query: [String: Any]) throws(KeychainError) -> Any? { try backend().copyMatching(query) }
    func update(_ query: [String: Any], with changes: [String: Any]) throws(KeychainError) {
        try backend().update(query, with: changes)
    }
    func delete(_ query: [String: Any]) throws(KeychainError) { try backend().delete(query) }
    func upsert(_ query: [String: Any], attributes: [String: Any]) throws(KeychainError) {
        try backend().upsert(query, attributes: attributes)
    }
}

/// The agent when it serves the keychain, else the keychain opened in this process. A request the agent
/// cannot answer because it went away (`errSecNotAvailable`) is answered in this process instead, and so is
/// every request of a program the agent does not know: the agent serves registered programs only, and any
/// other program opens the keychain itself, with the passphrase, exactly as when no agent runs.
struct AutomaticBackend: KeychainBackend {
    let path: String
    let embedded: EmbeddedBackend

    private func run<T>(_ body: (any KeychainBackend) throws(KeychainError) -> T) throws(KeychainError) -> T {
        if let client = try AgentClients.shared.client(for: path) {
            do {
                return try body(AgentBackend(client: client))
            } catch {
                switch error.status {
                case .notAvailable:
                    AgentClients.shared.forget(path)
                case .missingEntitlement where (try? client.status())?.callerStanding == AgentStatus.unregistered:
                    // Not registered with the agent: embedded mode, which needs the passphrase. When that fails
                    // too, say both why the agent refused and why the keychain could not be opened here (for
                    // want of a passphrase: the refusal's status, since registering is the usual remedy).
                    do {
                        return try body(embedded)
                    } catch let fallback where !embedded.isOpen {
                        throw KeychainError(
                            fallback.status == .interactionNotAllowed ? .missingEntitlement : fallback.status,
                            "\(error.detail ?? "this program is not registered with the agent"); "
                                + "without the agent: \(fallback.detail ?? fallback.message)")
                    }
                default:
                    throw error
                }
            }
        }
        return try body(embedded)
    }

    func add(_ attributes: [String: Any]) throws(KeychainError) -> Any? { try run { (b) throws(KeychainError) in try b.add(attributes) } }
    func copyMatching(_ query: [String: Any]) throws(KeychainError) -> Any? {
        try run { (b) throws(KeychainError) in try b.copyMatching(query) }
    }
    func update(_ query: [String: Any], with changes: [String: Any]) throws(KeychainError) {
        try run { (b) throws(KeychainError) in try b.update(query, with: changes) }
    }
    func delete(_ query: [String: Any]) throws(KeychainError) { try run { (b) throws(KeychainError) in try b.delete(query) } }
    func upsert(_ query: [String: Any], attributes: [String: Any]) throws(KeychainError) {
        try run { (b) throws(KeychainError) in try b.upsert(query, attributes: attributes) }
    }
}

/// Connections to the agent, one per keychain path.
final class AgentClients: Sendable {
    static let shared = AgentClients()
    private let clients = Mutex<[String: AgentClient]>([:])

    /// A connection to the agent serving `path`, or nil when none does; `errSecWrPerm` when the socket
    /// found is not safe to use (see `AgentLocation`).
    func client(for path: String) throws(KeychainError) -> AgentClient? {
        let key = URL(fileURLWithPath: path).standardizedFileURL.path
        if let cached = clients.withLock({ $0[key] }) { return cached }
        guard let client = try AgentClient.connect(keychainPath: key) else { return nil }
        clients.withLock { $0[key] = client }
        return client
    }

    func forget(_ path: String) {
        let key = URL(fileURLWithPath: path).standardizedFileURL.path
        clients.withLock { _ = $0.removeValue(forKey: key) }
    }
}
