public import FoundationEssentials
import LatchkeyPOSIX

/// Where keychains live, shared by the Swift API, the SecItem layer and the CLI:
///
/// 1. `LATCHKEY_KEYCHAIN`, when set, names the keychain file;
/// 2. otherwise the keychain set with `latchkey default-keychain -s` (kept in
///    `$XDG_CONFIG_HOME/latchkey/default-keychain`, else `~/.config/latchkey/default-keychain`);
/// 3. otherwise `$XDG_DATA_HOME/latchkey/login.keychain` (else `~/.local/share/latchkey/login.keychain`).
public enum KeychainLocation {
    /// The environment variable that names the keychain file.
    public static let keychainVariable = "LATCHKEY_KEYCHAIN"

    /// The directory that holds keychains by name: `$XDG_DATA_HOME/latchkey` or `~/.local/share/latchkey`.
    public static func directory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") { return data + "/latchkey" }
        let home = environment["HOME"] ?? CurrentProcess.homeDirectory
        return home + "/.local/share/latchkey"
    }

    /// The default keychain file.
    public static func defaultPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let named = environment[keychainVariable], !named.isEmpty { return resolve(named, environment: environment) }
        if let configured = configuredDefault(environment: environment) { return configured }
        return directory(environment: environment) + "/login.keychain"
    }

    /// The file that records the default keychain chosen with `latchkey default-keychain -s`.
    public static func configurationFile(environment: [String: String] = ProcessInfo.processInfo.environment) -> String
    {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return config + "/latchkey/default-keychain"
        }
        return (environment["HOME"] ?? CurrentProcess.homeDirectory) + "/.config/latchkey/default-keychain"
    }

    /// The keychain recorded in `configurationFile`, if any.
    public static func configuredDefault(environment: [String: String] = ProcessInfo.processInfo.environment) -> String?
    {
        guard let text = try? String(contentsOfFile: configurationFile(environment: environment), encoding: .utf8)
        else {
            return nil  // No file (the usual case) or an unreadable one: the built-in default applies.
        }
        let path = text.trimmingWhitespace()
        return path.isEmpty ? nil : path
    }

    /// Records `path` as the default keychain (nil forgets the choice).
    public static func setConfiguredDefault(
        _ path: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(KeychainError) {
        let file = configurationFile(environment: environment)
        guard let path else {
            try FileSystem.removeFile(file)
            return
        }
        try FileSystem.createPrivateDirectory(URL(fileURLWithPath: file).deletingLastPathComponent().path)
        let temporary = file + ".tmp"
        try FileSystem.removeFile(temporary)
        try FileSystem.createExclusiveFile(temporary, contents: Data((path + "\n").utf8))
        try FileSystem.replace(file, with: temporary)
    }

    /// A keychain given by path or by name: a value with a `/` is a path; a bare name is a file in
    /// `directory()`, with `.keychain` appended when it has no extension (as `security` resolves names).
    public static func resolve(
        _ nameOrPath: String, environment: [String: String] = ProcessInfo.processInfo.environment
    )
        -> String
    {
        if nameOrPath.contains("/") { return nameOrPath }
        let name = nameOrPath.contains(".") ? nameOrPath : nameOrPath + ".keychain"
        return directory(environment: environment) + "/" + name
    }
}
