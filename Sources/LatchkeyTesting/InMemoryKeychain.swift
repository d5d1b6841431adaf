public import Latchkey
import LatchkeySecurity

/// A keychain for your tests: the same engine, the same semantics and status codes as a real one, kept in
/// memory — no file, no Argon2id, no passphrase to manage. Creating one takes well under a millisecond.
///
/// ```swift
/// import LatchkeyTesting
///
/// let memory = InMemoryKeychain()
/// let keychain = memory.keychain(service: "com.example.api")    // a Keychain, as in production
/// try keychain.set("token", forKey: "alice")
///
/// memory.lock()                                                  // test your locked-keychain path
/// #expect(throws: KeychainFailure.self) { try keychain.string(forKey: "alice") }
/// ```
public final class InMemoryKeychain: Sendable {
    /// The engine behind it (for the typed `KeychainDatabase` API).
    public let database: KeychainDatabase
    /// The application identifier used by `keychain(...)` and `backend(...)`.
    public let applicationIdentifier: String
    private static let passphrase = "latchkey-testing"

    /// A new, empty, unlocked keychain.
    public init(applicationIdentifier: String = "com.example.tests") {
        self.database = KeychainDatabase.inMemory(passphrase: Passphrase(Self.passphrase))
        self.applicationIdentifier = applicationIdentifier
    }

    /// A connection for `Keychain` values or `SecItemConfiguration`.
    public var connection: KeychainConnection { .database(database, applicationIdentifier: applicationIdentifier) }

    /// A `Keychain` of generic passwords of `service` over this in-memory keychain.
    public func keychain(service: String, accessGroup: String? = nil) -> Keychain {
        Keychain(service: service, accessGroup: accessGroup, connection: connection)
    }

    /// A `Keychain` of internet passwords over this in-memory keychain.
    public func keychain(server: String, protocol: InternetProtocol = .https, port: Int = 0) -> Keychain {
        Keychain(server: server, protocol: `protocol`, port: port, connection: connection)
    }

    /// The dictionary operations for a caller holding the application's group plus `accessGroups`.
    public func backend(accessGroups: [String] = []) -> DatabaseBackend {
        var groups = [applicationIdentifier]
        groups += accessGroups.filter { $0 != applicationIdentifier }
        return DatabaseBackend(
            database: database,
            caller: CallerIdentity(
                applicationIdentifier: applicationIdentifier,
                accessGroups: groups))
    }

    /// Makes the global `SecItem…` functions use this keychain (until another `install()` or you set
    /// `SecItemConfiguration.connection` yourself).
    public func install(accessGroups: [String] = []) {
        SecItemConfiguration.connection = connection
        SecItemConfiguration.accessGroups = accessGroups
    }

    /// Locks, as a real keychain locks: `ak`-family items answer `errSecInteractionNotAllowed`.
    public func lock() { database.lock() }

    /// Unlocks again.
    public func unlock() {
        do {
            try database.unlock(with: Passphrase(Self.passphrase))
        } catch {
            // The passphrase is this type's own constant; a failure means the engine is broken.
            preconditionFailure("unlocking an in-memory keychain failed: \(error)")
        }
    }

    /// How many items (tombstones included) it holds.
    public func itemCount() throws(KeychainError) -> Int { try database.rowCount() }
}
