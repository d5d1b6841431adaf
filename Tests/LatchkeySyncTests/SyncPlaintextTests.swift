import Foundation
import LatchkeyEngine
import LatchkeySync
import LatchkeyTestSupport
import Testing

/// The server only ever holds ciphertext: a canary secret, label, service, account and free-form attribute
/// value are searched for in the server's tables, in every file of its data directory (heap, WAL) and in
/// every byte libpq exchanged with it.
@Suite("No plaintext reaches the sync server", .serialized)
struct SyncPlaintextTests {
    static let canaries = [
        "canary-secret-7f3a", "canary-label-91bc", "canary-service-2d4e", "canary-account-c81f", "canary-comment-55aa",
    ]

    @Test(arguments: SyncConnection.allCases) func noCanaryInTheTablesTheDataDirectoryOrTheTraffic(
        _ connection: SyncConnection
    ) throws {
        let cluster = try SyncTestServer(connection)
        let proxyDirectory = TemporaryDirectory()
        let traffic = proxyDirectory.file("traffic.bin")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tools/recording-proxy.py").path
        let proxy = try SpawnedProcess(
            "/usr/bin/python3", [script, proxyDirectory.file(".s.PGSQL.5432"), cluster.socket, traffic],
            environment: ["PATH": "/usr/bin:/bin"])
        defer { proxy.stop() }
        try waitUntil("the proxy listens") {
            FileManager.default.fileExists(atPath: proxyDirectory.file(".s.PGSQL.5432"))
        }
        let server =
            "host=\(proxyDirectory.path) port=5432 user=latchkey dbname=latchkey"
            + (connection == .pooled ? " latchkey_mode=pooled" : "")

        let a = try SyncDevice("a")
        let b = try SyncDevice("b")
        try a.keychain.add(
            NewItem(
                .genericPassword,
                attributes: [
                    .service: .string(Self.canaries[2]), .account: .string(Self.canaries[3]),
                    .label: .string(Self.canaries[1]),
                    .comment: .string(Self.canaries[4]), .synchronizable: .bool(true),
                ], data: Data(Self.canaries[0].utf8)), caller: SyncDevice.app)
        let made = try SyncClient.setup(a.keychain, server: server, deviceName: "a")
        try made.client.sync()
        let joined = try SyncClient.join(
            b.keychain, server: server, vault: nil, deviceName: "b", recoveryCode: made.recoveryCode)
        #expect(try joined.client.sync().applied == 1)
        #expect(try b.contents() == ["\(Self.canaries[2])/\(Self.canaries[3])": Self.canaries[0]])
        try cluster.psql("CHECKPOINT")

        // The proxy saw the traffic (the control: the device name travels in clear), but no canary.
        let wire = try Data(contentsOf: URL(fileURLWithPath: traffic))
        #expect(wire.range(of: Data("latchkey.push".utf8)) != nil)
        // Every table of the latchkey schema, as text.
        let dump =
            try cluster.psql("SELECT string_agg(t::text, ' ') FROM latchkey.items t")
            + cluster.psql("SELECT string_agg(t::text, ' ') FROM latchkey.devices t")
            + cluster.psql("SELECT string_agg(t::text, ' ') FROM latchkey.vault_keys t")
        #expect(!dump.isEmpty)
        var files: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: cluster.directory + "/data")
        while let file = enumerator?.nextObject() as? String { files.append(cluster.directory + "/data/" + file) }
        #expect(files.contains { $0.contains("/pg_wal/") })
        for canary in Self.canaries {
            let bytes = Data(canary.utf8)
            #expect(wire.range(of: bytes) == nil, "\(canary) crossed the wire")
            #expect(!dump.contains(canary), "\(canary) is in a table")
            #expect(
                !dump.contains(bytes.map { String(format: "%02x", $0) }.joined()), "\(canary) is in a table, in hex")
            for file in files {
                guard let contents = FileManager.default.contents(atPath: file) else { continue }
                #expect(contents.range(of: bytes) == nil, "\(canary) is in \(file)")
            }
        }
    }
}
