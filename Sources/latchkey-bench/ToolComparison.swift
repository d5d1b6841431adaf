import Foundation
import Latchkey

/// Latchkey's command-line tool and Swift API beside the tools people use on Linux today (`--peers`).
///
/// Every per-process tool — Latchkey's CLI included — is started by the same driver, `bench/peers.py`,
/// so process start-up costs the same for all of them. The driver starts `latchkeyd` for Latchkey, fills
/// each peer with the same items (service "service-i/10", account "account-i", a 32-byte token) and calls
/// back into `latchkey-bench --in-process` for the Swift API's round trip while the agent runs.
enum ToolComparison {
    /// The passphrase of the comparison keychain (a benchmark fixture, not a secret).
    static let passphrase = "benchmark passphrase"

    /// One item, named as the driver names it.
    static func item(_ index: Int) -> (service: String, account: String, token: String) {
        (
            "service-\(index / 10)", "account-\(index)",
            "token-" + String(repeating: "0", count: max(0, 26 - String(index).count)) + String(index)
        )
    }

    /// Creates `directory/latchkey.keychain` holding `size` items in the CLI's group, and its passphrase file.
    static func prepare(directory: String, size: Int) throws -> (keychain: String, passphraseFile: String) {
        let path = directory + "/latchkey.keychain"
        let keychain = try KeychainDatabase.create(at: path, passphrase: Passphrase(passphrase))
        let caller = CallerIdentity(applicationIdentifier: "latchkey", accessGroups: ["latchkey"])
        var start = 0
        while start < size {
            let end = min(size, start + 5_000)
            try keychain.addAll(
                (start..<end).map { index in
                    let (service, account, token) = item(index)
                    return NewItem(
                        .genericPassword, attributes: [.service: .string(service), .account: .string(account)],
                        data: Data(token.utf8))
                }, caller: caller)
            start = end
        }
        let passphraseFile = directory + "/passphrase"
        guard
            FileManager.default.createFile(
                atPath: passphraseFile, contents: Data((passphrase + "\n").utf8),
                attributes: [.posixPermissions: 0o600])
        else {
            throw CocoaError(.fileWriteUnknown)
        }
        return (path, passphraseFile)
    }

    /// `latchkey-bench --in-process`: the Swift API's `data(forKey:)` through the running agent and on a
    /// keychain opened in this process; prints `{tool: {"find": [nanoseconds...]}}`.
    static func inProcess(keychainPath: String, size: Int, samples: Int, passphraseFile: String) throws -> Data {
        guard let client = try AgentClient.connect(keychainPath: keychainPath) else {
            throw KeychainError(.notAvailable, "no agent serves \(keychainPath)")
        }
        let database = try KeychainDatabase.open(at: keychainPath)
        let passphrase = Passphrase(
            String(decoding: try Data(contentsOf: URL(fileURLWithPath: passphraseFile)), as: UTF8.self)
                .trimmingCharacters(in: .newlines))
        try database.unlock(with: passphrase)
        var results: [String: [String: [Double]]] = [:]
        for (name, connection) in [
            ("Swift API in-process (agent)", KeychainConnection.service(AgentKeychainService(client: client))),
            ("Swift API in-process (embedded)", .database(database, applicationIdentifier: "latchkey")),
        ] {
            var find: [Double] = []
            for _ in 0..<samples {
                let (service, account, token) = item(Int.random(in: 0..<size))
                let keychain = Keychain(service: service, accessGroup: "latchkey", connection: connection)
                var found: String?
                find.append(try time { found = try keychain.string(forKey: account) })
                guard found == token else {
                    throw KeychainError(.internal, "\(name) found the wrong item for \(account)")
                }
            }
            // New items (one durable transaction each), then removed again.
            let fresh = (0..<max(20, samples / 5)).map { item(size * 2 + $0) }
            var add: [Double] = []
            var delete: [Double] = []
            for (service, account, token) in fresh {
                let keychain = Keychain(service: service, accessGroup: "latchkey", connection: connection)
                add.append(try time { try keychain.set(token, forKey: account) })
            }
            for (service, account, _) in fresh {
                let keychain = Keychain(service: service, accessGroup: "latchkey", connection: connection)
                var removed = false
                delete.append(try time { removed = try keychain.remove(account) })
                guard removed else { throw KeychainError(.internal, "\(name) did not remove \(account)") }
            }
            results[name] = ["find": find, "add": add, "delete": delete]
        }
        // The key derivation alone, on this very file, for the embedded CLI's share.
        var unlock: [Double] = []
        for _ in 0..<5 {
            unlock.append(try time { try database.unlock(with: passphrase) })
        }
        results["Argon2id unlock of this keychain"] = ["unlock": unlock]
        return try JSONEncoder().encode(results)
    }

    /// Runs the driver and returns its measurements and notes.
    static func runPeers(
        python: String, script: String, binDirectory: String, directory: String, size: Int, samples: Int
    )
        throws -> PeerResults
    {
        let (keychain, passphraseFile) = try prepare(directory: directory, size: size)
        let data = try standardOutput(
            of: python,
            [
                script, "--size", "\(size)", "--samples", "\(samples)", "--latchkey-bin", binDirectory,
                "--latchkey-keychain", keychain, "--latchkey-passphrase-file", passphraseFile,
            ],
            what: "bench/peers.py")
        return try PeerResults(json: data, size: size)
    }
}

/// The driver's output: per tool, per workload, samples in nanoseconds; and its notes (failed peers, fill times).
struct PeerResults: Sendable {
    var size: Int
    var tools: [String: [String: Samples]] = [:]
    var notes: [String: String] = [:]

    init(json: Data, size: Int) throws {
        self.size = size
        guard let object = try JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw CocoaError(.propertyListReadCorrupt)
        }
        for (tool, value) in object {
            if tool == "notes", let notes = value as? [String: Any] {
                self.notes = notes.mapValues { "\($0)" }
            } else if let workloads = value as? [String: [Double]] {
                tools[tool] = workloads.mapValues { Samples($0) }
            }
        }
    }

    func median(_ tool: String, _ workload: String) -> Double? { tools[tool]?[workload]?.median }
}
