import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A private home for one test: keychains, configuration and the `latchkey` binary's environment.
final class CLISandbox {
    let directory = TemporaryDirectory()
    var binary: String { HelperProcess.product("latchkey") }
    static let passphrase = "sandbox passphrase"

    var environment: [String: String] {
        [
            "HOME": directory.path, "XDG_DATA_HOME": directory.path + "/data",
            "XDG_CONFIG_HOME": directory.path + "/config",
            "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LATCHKEY_AGENT_SOCKET": directory.path + "/run/agent.sock",
        ]
    }

    init() {
        try? FileManager.default.createDirectory(
            atPath: directory.path + "/run", withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
    }

    /// Stops an agent a test started (`unlock-keychain` starts one on demand), by its pid.
    deinit {
        // No agent (the usual case) or none that answers: nothing to stop.
        guard let client = try? AgentClient.connect(keychainPath: defaultKeychain, environment: environment),
            let status = try? client.status()
        else { return }
        kill(pid_t(status.agentProcessIdentifier!), SIGTERM)
    }

    /// The environment with LATCHKEY_PASSPHRASE set.
    var unattended: [String: String] { environment.merging(["LATCHKEY_PASSPHRASE": Self.passphrase]) { _, new in new } }

    var defaultKeychain: String { directory.path + "/data/latchkey/login.keychain" }

    @discardableResult
    func run(_ arguments: [String], environment: [String: String]? = nil, input: Data? = nil) throws
        -> HelperProcess.Output
    {
        try HelperProcess.run(binary, arguments, environment: environment ?? unattended, input: input)
    }

    @discardableResult
    func run(_ arguments: String..., input: String? = nil) throws -> HelperProcess.Output {
        try run(arguments, input: input.map { Data($0.utf8) })
    }

    /// Creates the default keychain with the cheapest key derivation (fast tests).
    func createKeychain(_ name: String? = nil) throws {
        let output = try run(
            ["create-keychain", "--kdf-memory", "19", "--kdf-passes", "2"] + (name.map { [$0] } ?? []))
        #expect(output.status == 0, "\(output.stderr)")
    }

    /// Every file in the sandbox's keychain directory, by name, with its bytes.
    func snapshot() throws -> [String: Data] {
        let directory = self.directory.path + "/data/latchkey"
        var files: [String: Data] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        where !name.hasSuffix("-shm") {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        }
        return files
    }
}

/// Replaces the timestamps of an item block (they change every run) with a fixed marker.
func maskingDates(_ text: String) -> String {
    text.replacingOccurrences(of: #"0x[0-9A-F]{32}  "\d{14}Z\\000""#, with: "<DATE>", options: .regularExpression)
}
