public import Foundation

/// Where keychains live, shared by the Swift API, the SecItem layer and the CLI:
///
/// 1. `LATCHKEY_KEYCHAIN`, when set, names the keychain file;
/// 2. otherwise `$XDG_DATA_HOME/latchkey/login.keychain`;
/// 3. otherwise `~/.local/share/latchkey/login.keychain`.
public enum KeychainLocation {
    /// The environment variable that names the keychain file.
    public static let keychainVariable = "LATCHKEY_KEYCHAIN"

    /// The directory that holds keychains by name: `$XDG_DATA_HOME/latchkey` or `~/.local/share/latchkey`.
    public static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/latchkey" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.local/share/latchkey"
    }

    /// The default keychain file.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let named = environment[keychainVariable], !named.isEmpty { return resolve(named, environment: environment) }
        return directory(environment: environment) + "/login.keychain"
    }

    /// A keychain given by path or by name: a value with a `/` is a path; a bare name is a file in
    /// `directory()`, with `.keychain` appended when it has no extension (as `security` resolves names).
    public static func resolve(_ nameOrPath: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> String
    {
        if nameOrPath.contains("/") { return nameOrPath }
        let name = nameOrPath.contains(".") ? nameOrPath : nameOrPath + ".keychain"
        return directory(environment: environment) + "/" + name
    }
}
