import FoundationEssentials
import LatchkeyEngine
import LatchkeyPOSIX
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
        case service(any KeychainService)
        case backend(any KeychainBackend)
    }

    let kind: Kind

    /// The embedded default keychain, unlocked from `PassphraseSource.automatic()`.
    public static var `default`: KeychainConnection { .embedded() }

    /// A keychain file, served by the agent when it runs and serves this program (`useAgent`), else opened
    /// in this process. Every `Keychain` using the same path shares one agent connection or one open,
    /// unlocked handle.
    public static func embedded(
        path: String = KeychainLocation.defaultPath(), passphrase: PassphraseSource = .automatic(),
        applicationIdentifier: String = defaultApplicationIdentifier, useAgent: Bool = true
    ) -> KeychainConnection {
        KeychainConnection(
            kind: .embedded(
                path: path, passphrase: passphrase, applicationIdentifier: applicationIdentifier,
                useAgent: useAgent))
    }

    /// A keychain you opened yourself (or an in-memory one), used as `applicationIdentifier`.
    public static func database(
        _ database: KeychainDatabase, applicationIdentifier: String = defaultApplicationIdentifier
    )
        -> KeychainConnection
    {
        KeychainConnection(kind: .database(database, applicationIdentifier: applicationIdentifier))
    }

    /// Any `KeychainService` (a `LocalKeychainService` for a caller you choose, or one of your own).
    public static func service(_ service: any KeychainService) -> KeychainConnection {
        KeychainConnection(kind: .service(service))
    }

    /// Any backend of the four dictionary operations (on Apple platforms, the system's `SecItem…`).
    public static func backend(_ backend: any KeychainBackend) -> KeychainConnection {
        KeychainConnection(kind: .backend(backend))
    }

    /// `LATCHKEY_APPLICATION_ID` when set, else the bundle identifier, else the process name.
    public static var defaultApplicationIdentifier: String {
        if let id = CurrentProcess.environment["LATCHKEY_APPLICATION_ID"], !id.isEmpty { return id }
        #if canImport(Darwin)
            return Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        #else
            // A Linux program has no bundle (swift-corelibs-foundation's `Bundle.main` has no identifier
            // without an Info.plist beside the executable); reading it would link all of that library.
            return ProcessInfo.processInfo.processName
        #endif
    }

    /// The service for a `Keychain` that names `accessGroup`. A `.database` connection grants it (you opened
    /// the database; you decide). The embedded default does not: the application holds its identifier's
    /// group and `LATCHKEY_ACCESS_GROUPS`, exactly what the agent grants a program registered with the same
    /// identifier and groups — so results and statuses are the same with and without the agent.
    func service(accessGroup: String?) -> any KeychainService {
        if case .database = kind { return service(accessGroups: accessGroup.map { [$0] } ?? []) }
        return service(accessGroups: [])
    }

    /// The groups `LATCHKEY_ACCESS_GROUPS` lists (comma-separated): the application's entitlements beyond
    /// its own identifier's group, in embedded mode.
    public static var defaultAccessGroups: [String] {
        (CurrentProcess.environment["LATCHKEY_ACCESS_GROUPS"] ?? "").split(separator: ",")
            .map { $0.trimmingWhitespace(newlines: false) }.filter { !$0.isEmpty }
    }

    /// The typed service for a caller holding the application's own group, plus `accessGroups` (and, in
    /// embedded mode, `LATCHKEY_ACCESS_GROUPS`): the seam every front end uses.
    public func service(accessGroups: [String]) -> any KeychainService {
        switch kind {
        case .service(let service):
            return service
        case .backend(let backend):
            return DictionaryKeychainService(backend: backend)
        case .database(let database, let applicationIdentifier):
            return LocalKeychainService(database: database, caller: Self.caller(applicationIdentifier, accessGroups))
        case .embedded(let path, let passphrase, let applicationIdentifier, let useAgent):
            let embedded = EmbeddedService(
                path: path, passphrase: passphrase,
                caller: Self.caller(applicationIdentifier, Self.defaultAccessGroups + accessGroups))
            return useAgent ? AutomaticService(path: path, embedded: embedded) : embedded
        }
    }

    /// The dictionary operations (`SecItem…`) for the same caller as `service(accessGroups:)`.
    public func backend(accessGroups: [String]) -> any KeychainBackend {
        if case .backend(let backend) = kind { return backend }
        return ServiceBackend(service: service(accessGroups: accessGroups))
    }

    /// The lock state: the agent's when it serves the keychain, else this process's handle.
    public func lockState() throws(KeychainError) -> LockState {
        switch kind {
        case .backend: throw KeychainError(.unimplemented, "a custom backend has no lock state")
        case .database(let database, _): return database.lockState
        case .service(let service): return try service.status().lockState
        case .embedded(let path, let passphrase, _, let useAgent):
            if useAgent, let client = try AgentRouting.client(for: path) { return try client.status().lockState }
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
        case .backend, .service: return nil
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
