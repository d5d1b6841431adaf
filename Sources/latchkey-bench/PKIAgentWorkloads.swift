import Foundation
import Latchkey
import LatchkeyPOSIX
import LatchkeyProtocol

/// `latchkey-bench --pki`'s second table: the keychain's key and certificate operations in this process and
/// through a `latchkeyd` the bench starts for the run (on a keychain of its own, with this program registered
/// with it) — keys the keychain holds (P-256 and RSA-2048 signatures, ECIES decryption), certificate add and
/// identity lookup. Both sides run the same typed service calls on a keychain file of the same make; what
/// differs is the agent's round trip. Verification and encryption use the public key in the calling process
/// either way, so they are in the first table only. The two sides are timed in alternating blocks, so a
/// slow spell of a noisy machine falls on both.
struct PKIAgentWorkloads {
    let samples: Int

    struct Row {
        let name: String
        let inProcess: Samples
        let agent: Samples
        /// Per pair of neighbouring blocks, the agent block's median less the in-process block's: what the
        /// difference is judged by, since a slow spell of the machine falls on both blocks of a pair.
        var blockDifferences: [Double] = []
        /// Whether the 60 µs goal applies (not to the status request, which is the agent's own floor).
        var judged = true

        /// The median of the block differences, and the interval from its third lowest to its third highest:
        /// with ten blocks or more, the sign test gives that interval at least 89 % of holding the true median
        /// difference (the chance that two or fewer of ten fall on one side of it is 5.5 % a side).
        var difference: (median: Double, low: Double, high: Double) {
            let sorted = blockDifferences.sorted()
            guard sorted.count >= 10 else { return (agent.median - inProcess.median, .nan, .nan) }
            return (Samples(sorted).median, sorted[2], sorted[sorted.count - 3])
        }

        /// Against the goal (≤ 60 µs): yes when the whole interval is within it, no when the whole interval
        /// is above it, and "not resolved" when the machine's noise leaves the interval across it.
        var verdict: String {
            guard judged else { return "–" }
            let (median, low, high) = difference
            guard !low.isNaN else { return median <= 60_000 ? "yes" : "no" }
            if high <= 60_000 { return "yes" }
            if low > 60_000 { return "no" }
            return "not resolved"
        }
    }

    /// What the run measured: the rows, and the floor — a framed message of the size of a signing request
    /// sent to another process that echoes it, over a Unix socket, as the agent's requests travel.
    struct Results {
        let rows: [Row]
        let socketRoundTrip: Samples
    }

    static let passphrase = Passphrase("benchmark passphrase")
    /// The row of a password's lookup, judged against issue 16's goal (through the agent within 2× of in process).
    static let passwordLookup = "password lookup (one item's data)"
    /// The row of the same lookup's request replayed as bytes: the floor of the agent path (issue 56).
    static let replayedLookup = "the same lookup's request replayed on the warm connection (floor)"
    static let caller = CallerIdentity(applicationIdentifier: "bench.app", accessGroups: ["bench.app"])
    /// The identity lookup: the certificate labelled "c1", joined with its private key (what a
    /// `kSecClassIdentity` search does — one request through the agent).
    static let identityCertificates = ItemQuery(
        .certificate, matching: [.label: .string("c1")], limit: .all, returning: [.attributes, .data])
    static let identityKeys = ItemQuery(.key, returning: [.attributes, .data])

    /// Runs `local` and `agent` `count` times each (after a warm-up), timing each call: in ten blocks
    /// taken in turn, so each side runs warm within a block (as a program calling in a loop does) and a slow
    /// spell of a noisy machine falls on both sides alike.
    static func measure(_ name: String, _ count: Int, local: () throws -> Void, agent: () throws -> Void) rethrows
        -> Row
    {
        for _ in 0..<min(20, count) {
            try local()
            try agent()
        }
        var localTimes: [Double] = []
        var agentTimes: [Double] = []
        var differences: [Double] = []
        let block = max(1, count / 10)
        var done = 0
        while done < count {
            let size = min(block, count - done)
            var localBlock: [Double] = []
            var agentBlock: [Double] = []
            for _ in 0..<size { localBlock.append(try time(local)) }
            for _ in 0..<size { agentBlock.append(try time(agent)) }
            localTimes += localBlock
            agentTimes += agentBlock
            differences.append(Samples(agentBlock).median - Samples(localBlock).median)
            done += size
        }
        return Row(
            name: name, inProcess: Samples(localTimes), agent: Samples(agentTimes), blockDifferences: differences)
    }

    func run() throws -> Results {
        let directory = NSTemporaryDirectory() + "/latchkey-bench-pki-\(ProcessInfo.processInfo.processIdentifier)"
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }  // Scratch files; a leftover only costs disk.
        let agent = try RunningAgent(directory: directory)
        defer { agent.stop() }
        let local = LocalKeychainService(
            database: try KeychainDatabase.create(
                at: directory + "/embedded.keychain", passphrase: Self.passphrase, keyDerivation: .minimum),
            caller: Self.caller)
        let sides: [any KeychainService] = [local, agent.service]

        let socketRoundTrip = try Self.echoRoundTrips(directory: directory, count: samples)
        let message = Data(repeating: 0x42, count: 256)
        let ecdsa = KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256")
        let pkcs1 = KeyAlgorithm(rawValue: "algid:sign:RSA:message-PKCS1v15:SHA256")
        let ecies = KeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV")
        var rows: [Row] = []
        func row(_ name: String, count: Int? = nil, _ body: (any KeychainService) throws -> () throws -> Void) throws {
            let bodies = try sides.map { service in try body(service) }
            rows.append(try Self.measure(name, count ?? samples, local: bodies[0], agent: bodies[1]))
        }
        try row("agent round trip (status)") { service in { _ = try service.status() } }
        rows[rows.count - 1].judged = false
        try row(Self.passwordLookup) { service in
            _ = try service.add(
                NewItem(
                    .genericPassword, attributes: [.service: .string("bench"), .account: .string("alice")],
                    data: Data(count: 32)), returning: [])
            let query = ItemQuery(
                .genericPassword, matching: [.service: .string("bench"), .account: .string("alice")], returning: .data)
            return { _ = try service.copyMatching(query) }
        }
        rows[rows.count - 1].judged = false
        // Issue 56's floor for the agent path: the lookup's request encoded once and its bytes replayed on the
        // warm connection (the agent's work and the trip, none of the client's), beside the same lookup in process.
        let lookup = ItemQuery(
            .genericPassword, matching: [.service: .string("bench"), .account: .string("alice")], returning: .data)
        let client = agent.service.client
        final class Replays {
            var messages: [Data]
            var next = 0
            init(_ messages: [Data]) { self.messages = messages }
        }
        let replays = Replays(client.encodedAhead(.keychain(.copyMatching(lookup)), count: samples + 20))
        rows.append(
            try Self.measure(
                Self.replayedLookup, samples, local: { _ = try local.copyMatching(lookup) },
                agent: {
                    _ = try client.replay(replays.messages[replays.next])
                    replays.next += 1
                }))
        rows[rows.count - 1].judged = false
        func heldKey(_ service: any KeychainService, _ type: KeyType, bits: Int, label: String) throws -> HeldKey {
            guard
                let made = try service.createHeldKey(
                    HeldKeyRequest(type: type, bits: bits, attributes: [.label: .string(label)]),
                    returning: [.attributes, .data])
            else { throw KeychainError(.internal, "the held key did not come back") }
            return try HeldKey(result: made, service: service)
        }
        try row("held P-256 sign") { service in
            let key = try heldKey(service, .ellipticCurve, bits: 256, label: "p256")
            return { _ = try key.sign(ecdsa, message) }
        }
        try row("held RSA-2048 sign") { service in
            let key = try heldKey(service, .rsa, bits: 2048, label: "rsa")
            return { _ = try key.sign(pkcs1, message) }
        }
        try row("held ECIES P-256 decrypt") { service in
            let key = try heldKey(service, .ellipticCurve, bits: 256, label: "ecies")
            let sealed = try key.publicKey.encrypt(ecies, message)
            return { _ = try key.decrypt(ecies, sealed) }
        }
        // Each add is a durable transaction (a disk sync), so fewer of them.
        let certificateDER = try PKIWorkloads.selfIssuedCertificate()
        try row("certificate add", count: min(samples, 300)) { service in
            var added = 0
            return {
                added += 1
                _ = try service.add(
                    NewItem(
                        .certificate,
                        attributes: [.label: .string("c\(added)"), .serialNumber: .data(Data("\(added)".utf8))],
                        data: certificateDER), returning: [])
            }
        }
        let hash = try Certificate(derRepresentation: certificateDER).publicKeyHash
        try row("identity lookup") { service in
            _ = try service.add(
                NewItem(
                    .key, attributes: [.keyClass: .number(1), .applicationLabel: .data(hash)], data: Data(count: 97)),
                returning: [])
            return {
                _ = try service.copyIdentities(
                    certificates: Self.identityCertificates, keys: Self.identityKeys, limit: 1)
            }
        }
        return Results(rows: rows, socketRoundTrip: socketRoundTrip)
    }

    /// The floor of a request's trip: `count` round trips of a 320-byte framed message to a child process
    /// (`latchkey-bench --echo-socket PATH`) that sends each back.
    static func echoRoundTrips(directory: String, count: Int) throws -> Samples {
        let path = directory + "/echo.sock"
        let child = Process()
        child.executableURL = URL(
            fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        child.arguments = ["--echo-socket", path]
        try child.run()
        defer {
            child.terminate()
            child.waitUntilExit()
        }
        let deadline = Date().addingTimeInterval(10)
        var connected: AgentStream?
        while connected == nil {
            guard Date() < deadline, child.isRunning else {
                throw KeychainError(.notAvailable, "the echo process did not start")
            }
            connected = FileManager.default.fileExists(atPath: path) ? AgentStream.connect(path: path) : nil
            if connected == nil { Thread.sleep(forTimeInterval: 0.01) }
        }
        guard let stream = connected else { throw KeychainError(.notAvailable, "the echo process did not answer") }
        stream.spinNanoseconds = AgentFrame.replySpinNanoseconds  // As the agent's clients wait for replies.
        let message = Data(repeating: 0x42, count: 320)
        for _ in 0..<min(50, count) {
            try stream.send(message)
            _ = try stream.receive()
        }
        var values: [Double] = []
        for _ in 0..<count {
            values.append(
                try time {
                    try stream.send(message)
                    _ = try stream.receive()
                })
        }
        return Samples(values)
    }

    /// `latchkey-bench --echo-socket PATH`: accepts one connection on `PATH` and sends every frame back
    /// until it closes.
    static func echo(at path: String) throws {
        let listener = try UnixSocket.listen(at: path)
        let stream = AgentStream(descriptor: try UnixSocket.accept(listener))
        stream.spinNanoseconds = AgentFrame.requestSpinNanoseconds  // As the agent waits for requests.
        while true {
            let frame: Data
            do {
                frame = try stream.receive()
            } catch .closed {
                return
            }
            try stream.send(frame)
        }
    }

    /// The table: both medians, the agent's p10–p90, and the difference against the goal (≤ 60 µs), after
    /// the floor of any round trip between two processes on this machine.
    static func render(_ results: Results) -> String {
        let floor = results.socketRoundTrip
        var lines = [
            "## Keys and certificates through the agent", "",
            "The same service calls on a keychain opened in this process and through a `latchkeyd` started for the run "
                + "(this program registered with it), timed in alternating blocks. Goal (issue 13): through the agent "
                + "within 60 µs of in process. "
                + "The floor of any request's trip, measured in the same run: a 320-byte framed message to another "
                + "process and back over a Unix socket (both ends polling before they sleep, as the agent and its clients do), "
                + "median \(formatDuration(floor.median)) "
                + "(p10–p90 \(formatDuration(floor.p10))–\(formatDuration(floor.p90))).", "",
            "The difference is the median, over ten pairs of neighbouring blocks, of the agent block's median less the "
                + "in-process block's, with the interval from the third lowest to the third highest of the ten (at least 89 % "
                + "by the sign test); the verdict is yes or no only when that whole interval is on one side of 60 µs.",
            "",
            "| operation | in process median | through the agent median | agent p10–p90 | difference (interval) | within 60 µs |",
            "|---|---|---|---|---|---|",
        ]
        for row in results.rows {
            let (median, low, high) = row.difference
            let interval = low.isNaN ? "" : " (\(formatDuration(low)) … \(formatDuration(high)))"
            lines.append(
                "| \(row.name) | \(formatDuration(row.inProcess.median)) | \(formatDuration(row.agent.median)) | "
                    + "\(formatDuration(row.agent.p10))–\(formatDuration(row.agent.p90)) | \(formatDuration(median))\(interval) | \(row.verdict) |"
            )
        }
        if let lookup = results.rows.first(where: { $0.name == passwordLookup }) {
            let ratio = lookup.agent.median / lookup.inProcess.median
            lines += [
                "",
                "Goal (issue 16): a password's lookup through the agent within 2× of in process: "
                    + "\(formatDuration(lookup.agent.median)) against \(formatDuration(lookup.inProcess.median)) "
                    + "(\(String(format: "%.2f", ratio))×) — \(ratio <= 2 ? "met" : "**not met**").",
            ]
            if let replay = results.rows.first(where: { $0.name == replayedLookup }) {
                let floorRatio = replay.agent.median / lookup.inProcess.median
                lines += [
                    "",
                    "The floor of that path (issue 56): the same request's bytes replayed on the warm connection — the "
                        + "agent's find, its access log entry and the trip, none of the client's work — "
                        + "\(formatDuration(replay.agent.median)) (\(String(format: "%.2f", floorRatio))× in process); "
                        + "the Swift API adds \(formatDuration(lookup.agent.median - replay.agent.median)) to it.",
                ]
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A `latchkeyd` for the run: its own keychain and socket in `directory`, unlocked, with this program
/// registered; stopped by its pid.
final class RunningAgent {
    let process = Process()
    let service: AgentKeychainService

    /// The keychain the agent serves.
    let keychainPath: String

    /// Starts latchkeyd with `arguments` besides its keychain and socket (`--no-access-log`).
    init(directory: String, arguments: [String] = []) throws {
        let keychain = directory + "/agent.keychain"
        keychainPath = keychain
        let socket = directory + "/agent.sock"
        _ = try KeychainDatabase.create(at: keychain, passphrase: PKIAgentWorkloads.passphrase, keyDerivation: .minimum)
        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        process.executableURL = URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("latchkeyd")
        process.arguments = ["--keychain", keychain, "--socket", socket] + arguments
        // No system bus (no logind) and no pinentry: nothing outside the run is reached.
        process.environment = [
            "HOME": directory, "PATH": "/usr/bin:/bin", "LATCHKEY_PINENTRY": directory + "/no-pinentry",
            "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=" + directory + "/no-system-bus",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let environment = ["LATCHKEY_AGENT_SOCKET": socket, "HOME": directory]
        let deadline = Date().addingTimeInterval(10)
        var client: AgentClient?
        while client == nil {
            guard Date() < deadline, process.isRunning else {
                process.terminate()
                throw KeychainError(.notAvailable, "latchkeyd did not start (\(process.executableURL?.path ?? ""))")
            }
            if FileManager.default.fileExists(atPath: socket) {
                client = try AgentClient.connect(keychainPath: keychain, environment: environment)
            }
            if client == nil { Thread.sleep(forTimeInterval: 0.01) }
        }
        guard let client else { throw KeychainError(.notAvailable, "latchkeyd did not answer") }
        service = AgentKeychainService(client: client)
        try service.unlock(with: PKIAgentWorkloads.passphrase)
        _ = try service.register(
            executableAt: me, applicationIdentifier: PKIAgentWorkloads.caller.applicationIdentifier,
            accessGroups: PKIAgentWorkloads.caller.accessGroups, passphrase: PKIAgentWorkloads.passphrase)
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}
