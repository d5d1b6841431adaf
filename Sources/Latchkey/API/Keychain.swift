/// The friendly keychain API: a value scoped to a service (generic passwords) or to a server (internet
/// passwords), with chainable modifiers that return copies.
///
/// ```swift
/// let keychain = Keychain(service: "com.example.mail")
/// try keychain.set("hunter2", forKey: "alice@example.com")
/// let password = try keychain.string(forKey: "alice@example.com")   // nil when there is none
///
/// let synced = keychain.accessibility(.afterFirstUnlock).label("Mail password")
/// ```
///
/// A missing item reads as `nil`; every other failure throws a `KeychainFailure` that keeps Apple's status.
///
/// Thread safety: `Keychain` is an immutable `Sendable` value; its operations may run from any thread at
/// once (the keychain serializes writes, and several processes may share the file). The synchronous
/// methods block the calling thread for a few microseconds to milliseconds (a durable write waits for the
/// disk); their `async` overloads run the same work on a global dispatch queue so they never block a
/// Swift concurrency executor.
public struct Keychain: Sendable {
    /// What the items of this value are keyed by.
    public enum Scope: Hashable, Sendable {
        /// Generic passwords of a service (`kSecAttrService`); the key is the account.
        case service(String)
        /// Internet passwords of a server; the key is the account.
        case server(InternetServer)
    }

    /// The identity of an internet password besides its account.
    public struct InternetServer: Hashable, Sendable {
        /// `kSecAttrServer`.
        public var host: String
        /// `kSecAttrProtocol`.
        public var `protocol`: InternetProtocol
        /// `kSecAttrPort` (0 for none).
        public var port: Int
        /// `kSecAttrPath`.
        public var path: String
        /// `kSecAttrAuthenticationType`.
        public var authenticationType: AuthenticationType
        /// `kSecAttrSecurityDomain`.
        public var securityDomain: String
    }

    /// The scope: a service or a server.
    public let scope: Scope
    /// The access group the items live in; nil for the application's own group.
    public let accessGroup: String?
    /// Which keychain, and how it is unlocked.
    public let connection: KeychainConnection
    /// When the items written by this value are readable (default: `.whenUnlocked`).
    public private(set) var accessibility: Accessibility = .whenUnlocked
    /// Whether this value reads and writes synchronizable items (default: false).
    public private(set) var isSynchronizable = false
    /// The label written with each item (`kSecAttrLabel`).
    public private(set) var label: String?
    /// The comment written with each item (`kSecAttrComment`).
    public private(set) var comment: String?

    /// Generic passwords of `service`.
    public init(service: String, accessGroup: String? = nil, connection: KeychainConnection = .default) {
        self.scope = .service(service)
        self.accessGroup = accessGroup
        self.connection = connection
    }

    /// Internet passwords of a server.
    public init(
        server: String, protocol: InternetProtocol = .https, port: Int = 0, path: String = "",
        authenticationType: AuthenticationType = .default, securityDomain: String = "",
        accessGroup: String? = nil, connection: KeychainConnection = .default
    ) {
        self.scope = .server(
            InternetServer(
                host: server, protocol: `protocol`, port: port, path: path, authenticationType: authenticationType,
                securityDomain: securityDomain))
        self.accessGroup = accessGroup
        self.connection = connection
    }

    /// A copy that writes items with `accessibility`.
    public func accessibility(_ accessibility: Accessibility) -> Keychain {
        var copy = self
        copy.accessibility = accessibility
        return copy
    }

    /// A copy that reads and writes synchronizable (or only non-synchronizable) items.
    public func synchronizable(_ synchronizable: Bool) -> Keychain {
        var copy = self
        copy.isSynchronizable = synchronizable
        return copy
    }

    /// A copy that writes `label` with each item.
    public func label(_ label: String?) -> Keychain {
        var copy = self
        copy.label = label
        return copy
    }

    /// A copy that writes `comment` with each item.
    public func comment(_ comment: String?) -> Keychain {
        var copy = self
        copy.comment = comment
        return copy
    }
}
