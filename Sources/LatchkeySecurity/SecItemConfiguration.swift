public import Latchkey
import Synchronization

/// Which keychain the global `SecItem…` functions use, and the extra access groups ("entitlements") the
/// process holds. The default is `KeychainConnection.default`: the embedded default keychain, unlocked from
/// `LATCHKEY_PASSPHRASE` or a terminal prompt, for the application `LATCHKEY_APPLICATION_ID` (else the
/// bundle identifier or process name).
///
/// ```swift
/// SecItemConfiguration.connection = .embedded(path: "/srv/app/app.keychain", passphrase: .keyFile("/run/secrets/kc"))
/// SecItemConfiguration.accessGroups = ["com.example.shared"]
/// ```
public enum SecItemConfiguration {
    private struct State: Sendable {
        var connection = KeychainConnection.default
        var accessGroups: [String] = []
    }

    private static let state = Mutex(State())

    /// The keychain the `SecItem…` functions use.
    public static var connection: KeychainConnection {
        get { state.withLock { $0.connection } }
        set { state.withLock { $0.connection = newValue } }
    }

    /// Access groups the process may name in `kSecAttrAccessGroup` besides its application identifier
    /// (Apple's `keychain-access-groups` entitlement). Ignored by a `.backend` connection, whose backend
    /// carries its own caller.
    public static var accessGroups: [String] {
        get { state.withLock { $0.accessGroups } }
        set { state.withLock { $0.accessGroups = newValue } }
    }

    static func backend() -> any KeychainBackend {
        let (connection, groups) = state.withLock { ($0.connection, $0.accessGroups) }
        return connection.backend(accessGroups: groups)
    }
}
