import Foundation
import LatchkeyTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// A directory of a test's own: a home, a keychain made there (with a cheap key derivation), and the
/// `latchkey` binary run on it with its passphrase in the environment and no agent.
final class FormatsSandbox {
    let directory = TemporaryDirectory()
    static let passphrase = "sandbox passphrase"
    var keychain: String { directory.file("test.keychain") }
    var home: String { directory.file("home") }

    var environment: [String: String] {
        [
            "HOME": home, "XDG_DATA_HOME": home + "/.local/share", "XDG_CONFIG_HOME": home + "/.config",
            "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LATCHKEY_AGENT_SOCKET": directory.file("run/agent.sock"),
            "LATCHKEY_PASSPHRASE": Self.passphrase,
        ]
    }

    init() throws {
        for path in [home, directory.file("run")] {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let made = try latchkey(["create-keychain", "--kdf-memory", "19", "--kdf-passes", "2", keychain])
        precondition(made.status == 0, made.stderr)
    }

    /// Runs `latchkey` with the sandbox's environment and `extra` over it.
    @discardableResult
    func latchkey(_ arguments: [String], _ extra: [String: String] = [:], input: Data? = nil) throws
        -> HelperProcess.Output
    {
        try HelperProcess.run(
            HelperProcess.product("latchkey"), arguments,
            environment: environment.merging(extra) { _, new in new }, input: input)
    }

    /// Writes `text` to a file of the sandbox; its path.
    func write(_ name: String, _ text: String) throws -> String {
        let path = directory.file(name)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Every item of the keychain as `dump-keychain -d` prints it.
    func dump() throws -> String {
        let output = try latchkey(["dump-keychain", "-d", keychain])
        precondition(output.status == 0, output.stderr)
        return output.stdout
    }
}
