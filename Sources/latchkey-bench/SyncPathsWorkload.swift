import Foundation
import Latchkey
import LatchkeyDBus
import LatchkeyPOSIX
import LatchkeySync

/// `latchkey-bench --sync-paths`: how soon a change made on one device is visible on another, by the road the
/// change took on the first (issue 52). Device A is a `latchkeyd` started for the run with the Secret Service
/// on a private session bus (`--secret-service --secret-service-sync`); device B a keychain in this process
/// whose sync worker runs as the agent's does. A synchronizable item is added on A, then B's change feed is
/// read until it moves:
///
/// - through the agent's socket (`AgentKeychainService.add`);
/// - through the Secret Service (`CreateItem` over D-Bus, plain session);
/// - around the agent: the keychain file opened in this process and written directly — the road the Secret
///   Service took before every front end reached the engine through the agent's service, when the agent saw
///   such a change only at its change feed's next read (every 2 s).
struct SyncPathsWorkload {
    let samples: Int
    let binDirectory: String

    static let passphrase = Passphrase("benchmark passphrase")
    static let caller = CallerIdentity(applicationIdentifier: "bench.sync-paths", accessGroups: ["bench.sync-paths"])

    struct Results {
        var agent = Samples()
        var secretService = Samples()
        var aroundTheAgent = Samples()
    }

    func run() throws -> Results {
        let directory = NSTemporaryDirectory() + "/latchkey-bench-paths-\(ProcessInfo.processInfo.processIdentifier)"
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }  // Scratch files; a leftover only costs disk.
        let server = try BenchPostgres()
        defer { server.stop() }

        // The vault: A sets it up, B joins with the recovery code and pulls once.
        let aPath = directory + "/a.keychain"
        let recoveryCode: String
        do {
            let a = try KeychainDatabase.create(at: aPath, passphrase: Self.passphrase, keyDerivation: .minimum)
            recoveryCode = try SyncClient.setup(a, server: server.conninfo, deviceName: "a").recoveryCode
        }
        let b = try KeychainDatabase.create(
            at: directory + "/b.keychain", passphrase: Self.passphrase, keyDerivation: .minimum)
        let joined = try SyncClient.join(
            b, server: server.conninfo, vault: nil, deviceName: "b", recoveryCode: recoveryCode)
        _ = try joined.client.sync()

        // A's bus and agent.
        let bus = try PrivateSessionBus(directory: directory)
        defer { bus.stop() }
        let agent = try SyncingAgent(
            binDirectory: binDirectory, keychain: aPath, directory: directory, busAddress: bus.address)
        defer { agent.stop() }

        // B's worker, as in the agent: it LISTENs for the vault and pulls when the server rings.
        let worker = try SyncWorker(keychain: b, log: { _ in })
        worker.start()
        let deadline = Date().addingTimeInterval(30)
        while worker.completedRounds == 0 {
            guard Date() < deadline else { throw BenchError("the sync worker did not start") }
            Thread.sleep(forTimeInterval: 0.01)
        }

        let secretService = try SecretServiceWriter(address: bus.address)
        let direct = try KeychainDatabase.open(at: aPath)
        try direct.unlock(with: Self.passphrase)
        func item(_ road: String, _ sample: Int) -> NewItem {
            NewItem(
                .genericPassword,
                attributes: [
                    .service: .string("sync-paths"), .account: .string("\(road)-\(sample)"),
                    .synchronizable: .bool(true),
                ], data: Data("x".utf8))
        }
        func visible(_ write: () throws -> Void) throws -> Double {
            // The devices at rest first: A's worker also hears its own push's notification and runs a round
            // for it, which would carry a change made meanwhile around the agent along at once.
            Thread.sleep(forTimeInterval: 0.3)
            let before = try b.lastChangeSequence
            let start = now()
            try write()
            while try b.lastChangeSequence == before {
                guard Double(now() - start) < 10e9 else {
                    throw BenchError("a change did not reach the other device in 10 s")
                }
                usleep(200)
            }
            return Double(now() - start)
        }
        var results = Results()
        // One of each first, not counted (connections made, statements prepared); then the roads in turn, so
        // the machine's moods fall on all three alike.
        for sample in -1..<samples {
            let agentTime = try visible { _ = try agent.service.add(item("agent", sample), returning: []) }
            let busTime = try visible {
                try secretService.create(label: "sync-paths \(sample)", attributes: ["sample": "\(sample)"])
            }
            let directTime = try visible { _ = try direct.add(item("direct", sample), caller: Self.caller) }
            guard sample >= 0 else { continue }
            results.agent.nanoseconds.append(agentTime)
            results.secretService.nanoseconds.append(busTime)
            results.aroundTheAgent.nanoseconds.append(directTime)
        }
        return results
    }

    static func render(_ results: Results, samples: Int, command: String) -> String {
        func ms(_ value: Double) -> String { String(format: "%.1f ms", value / 1e6) }
        func row(_ name: String, _ figures: Samples) -> String {
            let ratio = figures.median / results.agent.median
            return
                "| \(name) | \(ms(figures.median)) | \(ms(figures.percentile(0.95))) | \(String(format: "%.2f", ratio))× |"
        }
        return """
            Change to visible on another device, by the road the change took on the first: \(command)

            A synchronizable item added on device A (a `latchkeyd` with `--secret-service --secret-service-sync` on \
            a private session bus) until device B's change feed moves (B's sync worker pulls when PostgreSQL's \
            NOTIFY rings); \(samples) samples of each, taken in turn, each after 0.3 s at rest.

            | Road on device A | median | p95 | vs the agent's socket |
            |---|---:|---:|---:|
            \(row("the agent's socket (`AgentKeychainService.add`)", results.agent))
            \(row("the Secret Service (`CreateItem` over D-Bus)", results.secretService))
            \(row("around the agent (the file written by another process; the Secret Service's road before issue 52)", results.aroundTheAgent))

            """
    }
}

/// A `dbus-daemon` for the run: a session bus on a socket in the run's directory, with no service directory
/// (nothing is activated on it); stopped by its pid.
final class PrivateSessionBus {
    let address: String
    private var pid: Int32?

    init(directory: String) throws {
        let socket = directory + "/session-bus"
        address = "unix:path=" + socket
        let configuration = directory + "/session-bus.conf"
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(socket)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """.write(toFile: configuration, atomically: true, encoding: .utf8)
        pid = try Spawn.start(
            "/usr/bin/dbus-daemon", ["--config-file=" + configuration, "--nofork", "--nopidfile"],
            environment: ["PATH": "/usr/bin:/bin"], options: Spawn.Options(newSession: true))
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: socket) {
            guard Date() < deadline else { throw BenchError("dbus-daemon did not start") }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    func stop() {
        guard let pid else { return }
        Spawn.signal(pid, SIGTERM)
        _ = Spawn.wait(pid)
        self.pid = nil
    }
}

/// Device A's `latchkeyd`: the keychain set up for sync, the Secret Service on the run's bus (its items
/// synchronizable), unlocked; this program registered so that its own adds are served as an application's.
final class SyncingAgent {
    let service: AgentKeychainService
    private var pid: Int32?

    init(binDirectory: String, keychain: String, directory: String, busAddress: String) throws {
        let socket = directory + "/agent.sock"
        pid = try Spawn.start(
            binDirectory + "/latchkeyd",
            [
                "--keychain", keychain, "--socket", socket, "--secret-service", "--secret-service-sync",
                "--no-ssh-agent",
            ],
            environment: [
                "HOME": directory, "PATH": "/usr/bin:/bin", "LATCHKEY_PINENTRY": directory + "/no-pinentry",
                "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + directory + "/no-system-bus",
                "DBUS_SESSION_BUS_ADDRESS": busAddress,
            ], options: Spawn.Options(outputPath: directory + "/agent.log", newSession: true))
        let environment = ["LATCHKEY_AGENT_SOCKET": socket, "HOME": directory]
        let deadline = Date().addingTimeInterval(10)
        var client: AgentClient?
        while client == nil {
            guard Date() < deadline else { throw BenchError("latchkeyd did not start (\(directory)/agent.log)") }
            if FileManager.default.fileExists(atPath: socket) {
                client = try AgentClient.connect(keychainPath: keychain, environment: environment)
            }
            if client == nil { Thread.sleep(forTimeInterval: 0.01) }
        }
        guard let client else { throw BenchError("latchkeyd did not answer") }
        service = AgentKeychainService(client: client)
        try service.unlock(with: SyncPathsWorkload.passphrase)
        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        _ = try service.register(
            executableAt: me, applicationIdentifier: SyncPathsWorkload.caller.applicationIdentifier,
            accessGroups: SyncPathsWorkload.caller.accessGroups, passphrase: SyncPathsWorkload.passphrase)
    }

    func stop() {
        guard let pid else { return }
        Spawn.signal(pid, SIGTERM)
        _ = Spawn.wait(pid)
        self.pid = nil
    }
}

/// A Secret Service client on the run's bus: one plain session, `CreateItem` in the login collection.
final class SecretServiceWriter {
    let bus: Bus
    let session: String
    static let name = "org.freedesktop.secrets"
    static let path = "/org/freedesktop/secrets"

    init(address: String) throws {
        bus = try Bus(address: address)
        let reply = try bus.call(
            Self.name, path: Self.path, interface: "org.freedesktop.Secret.Service", member: "OpenSession"
        ) { (message) throws(BusError) in
            try message.append("plain")
            try message.open("v", "s")
            try message.append("")
            try message.close()
        }
        try reply.skip()  // The output: nothing for a plain session.
        session = try reply.readString("o")
    }

    func create(label: String, attributes: [String: String]) throws {
        _ = try bus.call(
            Self.name, path: Self.path + "/collection/login", interface: "org.freedesktop.Secret.Collection",
            member: "CreateItem"
        ) { (message) throws(BusError) in
            try message.appendCreateItem(
                label: label, attributes: attributes, session: session, secret: Array("x".utf8),
                contentType: "text/plain", replace: false)
        }
    }
}
