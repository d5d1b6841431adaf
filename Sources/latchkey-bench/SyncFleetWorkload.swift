import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyPOSIX
import LatchkeySync

#if canImport(Glibc)
    import Glibc
#endif

/// `latchkey-bench --sync-fleet N`: N simulated devices online at once against one PostgreSQL the bench
/// starts (durable), directly (each device a connection that LISTENs, as the agent in direct mode) and
/// through PgBouncer in transaction mode (each device polls at the agent's cadence, `SyncPollCadence`).
/// The devices are light clients — no keychain each, but real vault cryptography (every row sealed with
/// XChaCha20-Poly1305 and opened and verified by every reader) and the real server protocol (the schema,
/// `latchkey.push`'s compare-and-swap, pulls by cursor) — spread over a few processes of a few threads.
/// Ten devices per vault; a share of them write. First an idle phase (nobody writes), then a busy one:
/// change-to-visible latency (a writer's push to each other device of the vault having opened the row),
/// the server's CPU (PostgreSQL's processes, and PgBouncer's, from /proc) and its connections.
struct SyncFleetWorkload {
    let devices: Int
    let mode: SyncConnectionMode
    let idleSeconds: Int
    let busySeconds: Int

    static let devicesPerVault = 10
    /// One device in `writerEvery` writes, one change every `writeInterval` seconds on average.
    static let writerEvery = 20
    static let writeInterval = 30.0
    /// Direct connections the server allows: what a 2-core server with the usual memory is tuned to.
    static let maxConnections = 1_100
    static let processes = 4
    static let threadsPerProcess = 4
    /// Connection attempts a thread makes per pass over its devices (refused ones wait 10–20 s to try again).
    static let reconnectsPerPass = 8
    /// The agent's cadence, which the simulated devices keep.
    static let cadence = SyncPollCadence()
    /// The idle poll interval in seconds (the first polls are spread over one).
    static var idlePollSeconds: Double { cadence.idle / .seconds(1) }

    struct Results {
        var devices = 0
        var mode = SyncConnectionMode.direct
        var connected = 0
        var refused = 0
        var firstFailure: String?
        var latencies = Samples()
        var changes = 0
        var polls = 0
        var idleServerCores = 0.0
        var busyServerCores = 0.0
        var idlePoolerCores = 0.0
        var busyPoolerCores = 0.0
        var serverConnections = 0
        var idleSeconds = 0
        var busySeconds = 0
    }

    static func vaultID(_ index: Int) -> Data { Data([0x01]) + bigEndian(index, count: 15) }
    static func deviceID(_ index: Int) -> Data { Data([0x02]) + bigEndian(index, count: 15) }
    static func itemID(_ device: Int) -> Data { Data([0x03]) + bigEndian(device, count: 15) }
    /// The vault's key: derived from its index (the benchmark's devices share no keychain); the cryptography
    /// with it is the real one.
    static func vaultKey(_ index: Int) -> SecureBytes {
        SecureBytes(copying: Array(repeating: UInt8(truncatingIfNeeded: index &* 31 &+ 7), count: 32))
    }
    private static func bigEndian(_ value: Int, count: Int) -> Data {
        Data((0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * $0)) })
    }

    func run(executable: String) throws -> Results {
        var results = Results()
        results.devices = devices
        results.mode = mode
        results.idleSeconds = idleSeconds
        results.busySeconds = busySeconds
        let server = try BenchPostgres(
            settings: "max_connections = \(Self.maxConnections)\nsuperuser_reserved_connections = 5\n")
        defer { server.stop() }
        let admin = try PostgresConnection(server.conninfo)
        try SyncServerSchema.migrate(admin)
        let vaults = (devices + Self.devicesPerVault - 1) / Self.devicesPerVault
        try admin.execute(
            """
            CREATE ROLE fleet LOGIN;
            GRANT USAGE ON SCHEMA latchkey TO fleet;
            GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA latchkey TO fleet;
            GRANT DELETE ON latchkey.vault_keys, latchkey.items TO fleet;
            GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA latchkey TO fleet;
            INSERT INTO latchkey.vaults (id) SELECT decode('01' || lpad(to_hex(i), 30, '0'), 'hex') FROM generate_series(0, \(vaults - 1)) i;
            INSERT INTO latchkey.devices (vault, id, name, public_key, state)
                SELECT decode('01' || lpad(to_hex(d / \(Self.devicesPerVault)), 30, '0'), 'hex'), decode('02' || lpad(to_hex(d), 30, '0'), 'hex'),
                       'device-' || d, decode(repeat('00', 32), 'hex'), 'active' FROM generate_series(0, \(devices - 1)) d;
            """)
        try admin.execute("VACUUM ANALYZE")
        var pooler: BenchPgBouncer?
        var conninfo = "host=\(server.directory) port=5432 user=fleet dbname=latchkey"
        if mode == .pooled {
            pooler = try BenchPgBouncer(directory: server.directory, maxClients: devices + 100)
            conninfo = "host=\(server.directory) port=6432 user=fleet dbname=latchkey latchkey_mode=pooled"
        }
        defer { pooler?.stop() }

        // Phases on the wall clock, which every process shares: connect, idle, busy.
        let connectSeconds = 10 + devices / 400
        let start = Date().timeIntervalSince1970
        let idleStart = start + Double(connectSeconds)
        let busyStart = idleStart + Double(idleSeconds)
        let end = busyStart + Double(busySeconds)
        let perProcess = (devices + Self.processes - 1) / Self.processes
        var workers: [(pid: Int32, output: String)] = []
        for process in 0..<Self.processes {
            let first = process * perProcess
            let count = min(perProcess, devices - first)
            guard count > 0 else { continue }
            let output = server.directory + "/fleet-\(process).out"
            let pid = try Spawn.start(
                executable,
                [
                    "--sync-fleet-worker", "\(first),\(count),\(mode.rawValue),\(idleStart),\(busyStart),\(end)",
                    "--fleet-conninfo", conninfo,
                ], environment: ["PATH": "/usr/bin:/bin", "LANG": "C"], options: Spawn.Options(outputPath: output))
            workers.append((pid, output))
        }
        func sleep(until time: Double) { Thread.sleep(forTimeInterval: max(0, time - Date().timeIntervalSince1970)) }
        sleep(until: idleStart + 2)
        let idleFrom = (
            server: CPUTime.of(server.pid), pooler: CPUTime.of(pooler?.pid), at: Date().timeIntervalSince1970
        )
        sleep(until: busyStart)
        let idleTo = (server: CPUTime.of(server.pid), pooler: CPUTime.of(pooler?.pid), at: Date().timeIntervalSince1970)
        sleep(until: busyStart + 2)
        let busyFrom = (
            server: CPUTime.of(server.pid), pooler: CPUTime.of(pooler?.pid), at: Date().timeIntervalSince1970
        )
        sleep(until: end - 1)
        let busyTo = (server: CPUTime.of(server.pid), pooler: CPUTime.of(pooler?.pid), at: Date().timeIntervalSince1970)
        results.serverConnections = Int(
            try admin.query("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'").first?.first?
                .integer ?? 0)
        results.idleServerCores = (idleTo.server - idleFrom.server) / (idleTo.at - idleFrom.at)
        results.idlePoolerCores = (idleTo.pooler - idleFrom.pooler) / (idleTo.at - idleFrom.at)
        results.busyServerCores = (busyTo.server - busyFrom.server) / (busyTo.at - busyFrom.at)
        results.busyPoolerCores = (busyTo.pooler - busyFrom.pooler) / (busyTo.at - busyFrom.at)
        for worker in workers {
            if case .exited(0)? = Spawn.wait(worker.pid) {
            } else {
                // Whatever it wrote, for the message.
                let text = (try? String(contentsOfFile: worker.output, encoding: .utf8)) ?? ""
                FileHandle.standardError.write(
                    Data("latchkey-bench: a fleet process failed: \(text.suffix(2_000))\n".utf8))
            }
            // A worker that wrote nothing reports nothing.
            let text = (try? String(contentsOfFile: worker.output, encoding: .utf8)) ?? ""
            for line in text.split(separator: "\n") {
                let fields = line.split(separator: " ", maxSplits: 1).map(String.init)
                guard fields.count == 2 else { continue }
                switch fields.first {
                case "latency":
                    results.latencies.nanoseconds += fields[1].split(separator: ",").compactMap { Double($0) }.map {
                        $0 * 1e6
                    }
                case "connected": results.connected += Int(fields[1]) ?? 0
                case "refused": results.refused += Int(fields[1]) ?? 0
                case "changes": results.changes += Int(fields[1]) ?? 0
                case "polls": results.polls += Int(fields[1]) ?? 0
                case "failure": if results.firstFailure == nil { results.firstFailure = fields[1] }
                default: break
                }
            }
        }
        return results
    }

    static func render(_ runs: [Results], command: String) -> String {
        var text = "### Sync fleet (`\(command)`)\n\n"
        text +=
            "Ten devices per vault, one in \(writerEvery) writing a change every \(Int(writeInterval)) s on average; light clients in "
        text +=
            "\(processes) processes of \(threadsPerProcess) threads, real vault cryptography; PostgreSQL 15 durable, "
        text +=
            "max_connections = \(maxConnections); PgBouncer 1.18 in transaction mode, polling at \(cadence.fast / .seconds(1)) s after a change and \(idlePollSeconds) s idle (±\(Int(cadence.jitter * 100)) %).\n\n"
        text +=
            "| devices | mode | connected | refused | changes | visible p50 | visible p99 | polls/s | server idle | server busy | PgBouncer idle | PgBouncer busy | server connections | first failure |\n"
        text += "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n"
        for run in runs {
            let p50 = run.latencies.nanoseconds.isEmpty ? "–" : String(format: "%.2f s", run.latencies.median / 1e9)
            let p99 =
                run.latencies.nanoseconds.isEmpty ? "–" : String(format: "%.2f s", run.latencies.percentile(0.99) / 1e9)
            let seconds = Double(run.idleSeconds + run.busySeconds)
            text +=
                "| \(run.devices) | \(run.mode.rawValue) | \(run.connected) | \(run.refused) | \(run.changes) | \(p50) | \(p99) | "
            text += String(format: "%.0f", Double(run.polls) / seconds) + " | "
            text += String(
                format: "%.2f | %.2f | %.2f | %.2f", run.idleServerCores, run.busyServerCores, run.idlePoolerCores,
                run.busyPoolerCores)
            text += " core | \(run.serverConnections) | \(run.firstFailure ?? "none") |\n"
        }
        return text
    }
}

/// The CPU time (user + system, seconds) of process `root` and its children, from /proc — with the times
/// of the children it reaped (the postmaster's hold the backends that exited). Other servers on the machine
/// are not counted.
enum CPUTime {
    static func of(_ root: Int32?) -> Double {
        guard let root else { return 0 }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        var total = 0.0
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        where entry.allSatisfy(\.isNumber) {
            // A process that exited meanwhile has no stat: it is skipped.
            guard let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // From field 3 on: state, ppid (4) … utime, stime, cutime, cstime (14–17).
            let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
            guard fields.count > 15, Int32(entry) == root || Int32(fields[1]) == root else { continue }
            total += fields[11...14].compactMap { Double($0) }.reduce(0, +) / ticks
        }
        return total
    }
}

/// PgBouncer for the fleet, started by pid as `nobody` when run as root: transaction pooling, a Unix socket
/// in the server's directory (port 6432), trust for the role `fleet`.
final class BenchPgBouncer {
    private(set) var pid: Int32?

    init(directory: String, maxClients: Int) throws {
        let users = directory + "/pgbouncer-users.txt"
        try Data("\"fleet\" \"\"\n\"latchkey\" \"\"\n".utf8).write(to: URL(fileURLWithPath: users))
        let configuration = directory + "/pgbouncer.ini"
        try Data(
            """
            [databases]
            * = host=\(directory) port=5432
            [pgbouncer]
            listen_addr =
            unix_socket_dir = \(directory)
            listen_port = 6432
            auth_type = trust
            auth_file = \(users)
            pool_mode = transaction
            max_client_conn = \(maxClients)
            default_pool_size = 20
            """.utf8
        ).write(to: URL(fileURLWithPath: configuration))
        let asNobody = getuid() == 0
        pid = try Spawn.start(
            asNobody ? "/usr/bin/setpriv" : "/usr/sbin/pgbouncer",
            (asNobody ? ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/sbin/pgbouncer"] : []) + [
                configuration
            ],
            environment: ["PATH": "/usr/bin:/bin", "LANG": "C"],
            options: Spawn.Options(outputPath: directory + "/pgbouncer.log"))
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: directory + "/.s.PGSQL.6432") {
            guard Date() < deadline else { throw BenchError("PgBouncer did not start (\(directory)/pgbouncer.log)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    func stop() {
        guard let pid else { return }
        Spawn.signal(pid, SIGINT)
        _ = Spawn.wait(pid)
        self.pid = nil
    }
}

/// One process of the fleet: devices `first..<first+count`, on `threadsPerProcess` threads. Writes, at the
/// end, its change-to-visible latencies (milliseconds) and counts, one line each, on standard error.
final class SyncFleetProcess: @unchecked Sendable {
    // @unchecked: each thread owns its devices; the shared tallies are behind `lock`.
    let first: Int, count: Int, mode: SyncConnectionMode, conninfo: String
    let idleStart: Double, busyStart: Double, end: Double
    private let lock = NSLock()
    private var latencies: [Double] = []
    private var connected = 0, refused = 0, changes = 0, polls = 0
    private var failure: String?

    init(specification: String, conninfo: String) throws {
        let parts = specification.split(separator: ",").map(String.init)
        guard parts.count == 6, let first = Int(parts[0]), let count = Int(parts[1]),
            let mode = SyncConnectionMode(rawValue: parts[2]),
            let idle = Double(parts[3]), let busy = Double(parts[4]), let end = Double(parts[5])
        else { throw BenchError("bad --sync-fleet-worker") }
        (self.first, self.count, self.mode, self.conninfo, idleStart, busyStart, self.end) = (
            first, count, mode, conninfo, idle, busy, end
        )
    }

    final class Device {
        let index: Int
        let vault: Data
        let id: Data
        let keyring: VaultKeyring
        let key: SecureBytes
        var server: SyncServer?
        var cursor: Int64 = 0
        var cadence = SyncPollCadence()
        var next = 0.0
        var nextWrite = Double.infinity
        var version: Int64 = 0
        var retryAt = 0.0

        init(_ index: Int) {
            self.index = index
            let vaultIndex = index / SyncFleetWorkload.devicesPerVault
            vault = SyncFleetWorkload.vaultID(vaultIndex)
            id = SyncFleetWorkload.deviceID(index)
            key = SyncFleetWorkload.vaultKey(vaultIndex)
            var keyring = VaultKeyring()
            keyring.insert(SyncFleetWorkload.vaultKey(vaultIndex), id: 1)
            self.keyring = keyring
        }
    }

    func run() {
        let threads = SyncFleetWorkload.threadsPerProcess
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread.detachNewThread { [self] in
                drive(stride(from: first + thread, to: first + count, by: threads).map { Device($0) })
                group.leave()
            }
        }
        group.wait()
        // On standard error: the only descriptor Spawn's outputPath leaves open across exec besides it is gone.
        var text = "latency " + latencies.map { String(format: "%.1f", $0) }.joined(separator: ",") + "\n"
        text += "connected \(connected)\nrefused \(refused)\nchanges \(changes)\npolls \(polls)\n"
        if let failure { text += "failure \(failure)\n" }
        FileHandle.standardError.write(Data(text.utf8))
    }

    private func note(_ body: () -> Void) {
        lock.lock()
        body()
        lock.unlock()
    }

    private func failed(_ error: PostgresError) {
        note {
            if error.message.contains("too many clients") || error.message.contains("remaining connection slots") {
                refused += 1
            }
            if failure == nil { failure = error.message.replacingOccurrences(of: "\n", with: " ") }
        }
    }

    /// Connects each device (LISTENing when direct), then serves the phases.
    private func drive(_ devices: [Device]) {
        var generator = SystemRandomNumberGenerator()
        var latencies: [Double] = []
        var polls = 0
        var changes = 0
        func connect(_ device: Device) {
            do throws(PostgresError) {
                let server = try SyncServer.connect(conninfo)
                if mode == .direct { try server.listen(vault: device.vault) }
                device.server = server
                device.cursor = try server.newestChange(vault: device.vault) ?? 0
                note { connected += 1 }
            } catch {
                failed(error)
                device.retryAt = Date().timeIntervalSince1970 + 10 + Double.random(in: 0..<10, using: &generator)
            }
        }
        for device in devices {
            connect(device)
            if device.index % SyncFleetWorkload.writerEvery == 0 {
                device.nextWrite = busyStart + Double.random(in: 0..<SyncFleetWorkload.writeInterval, using: &generator)
            }
            device.next = idleStart + Double.random(in: 0..<SyncFleetWorkload.idlePollSeconds, using: &generator)
        }
        func pull(_ device: Device, at now: Double) throws(PostgresError) {
            guard let server = device.server else { return }
            while true {
                let page = try server.pull(vault: device.vault, after: device.cursor, limit: 1_000)
                for row in page.rows where row.author != device.id {
                    do throws(KeychainError) {
                        let record = try VaultCrypto.open(row, vault: device.vault, keyring: device.keyring)
                        if let data = record.data, data.count >= 8, now >= busyStart {
                            let written = data.prefix(8).reduce(UInt64(0)) { ($0 << 8) | UInt64($1) }
                            latencies.append(Date().timeIntervalSince1970 * 1_000 - Double(written) / 1_000)
                        }
                    } catch {
                        note { if failure == nil { failure = "a row did not open: \(error.message)" } }
                    }
                }
                guard let last = page.rows.last else { break }
                device.cursor = last.sequence
                device.cadence.noteChange(at: .now)
                if page.rows.count < 1_000 { break }
            }
        }
        func write(_ device: Device) throws(PostgresError) {
            guard let server = device.server else { return }
            let micros = UInt64(Date().timeIntervalSince1970 * 1_000_000)
            let stamp = Data((0..<8).reversed().map { UInt8(truncatingIfNeeded: micros >> (8 * UInt64($0))) })
            let record = SyncRecord(
                itemID: SyncFleetWorkload.itemID(device.index), version: device.version + 1, deleted: false,
                itemClass: .genericPassword,
                attributes: [
                    .service: .string("fleet"), .account: .string("device-\(device.index)"),
                    .synchronizable: .number(1),
                ],
                data: stamp + Data(repeating: 0x5A, count: 24))
            let envelope = VaultCrypto.seal(record, vault: device.vault, keyID: 1, key: device.key, author: device.id)
            let result = try server.push(vault: device.vault, device: device.id, [(envelope, device.version)])
            if result.first?.sequence != nil {
                device.version += 1
                changes += 1
            } else {
                device.version = result.first?.serverVersion ?? device.version
            }
            device.cadence.noteChange(at: .now)
        }
        while true {
            let now = Date().timeIntervalSince1970
            guard now < end else { break }
            var wake = end
            // A refused connection costs a fork on the server and milliseconds here: a few per pass, so the
            // devices that got in are still served (else a direct run beyond max_connections measures only
            // the refusals).
            var attempts = 0
            for device in devices {
                if device.server == nil {
                    if now >= device.retryAt, attempts < SyncFleetWorkload.reconnectsPerPass {
                        attempts += 1
                        connect(device)
                    }
                    wake = min(wake, max(device.retryAt, now + 0.05))
                    continue
                }
                do throws(PostgresError) {
                    if now >= device.nextWrite {
                        try write(device)
                        device.nextWrite =
                            now + Double.random(in: 0..<(2 * SyncFleetWorkload.writeInterval), using: &generator)
                    }
                    if mode == .pooled, now >= device.next {
                        polls += 1
                        if let newest = try device.server?.newestChange(vault: device.vault), newest != device.cursor {
                            try pull(device, at: now)
                        }
                        let interval = device.cadence.interval(at: .now, using: &generator)
                        device.next =
                            now + Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
                    }
                } catch {
                    failed(error)
                    device.server = nil
                    device.retryAt = now + 1
                }
                wake = min(wake, device.nextWrite, mode == .pooled ? device.next : end)
            }
            let milliseconds = Int32(max(0, min(1_000, (wake - Date().timeIntervalSince1970) * 1_000)))
            if mode == .direct {
                let sockets = devices.compactMap { $0.server?.connection.socket }
                let ready = Set(FileDescriptor.waitReadable(sockets, milliseconds: milliseconds))
                guard !ready.isEmpty else { continue }
                for device in devices {
                    guard let server = device.server, ready.contains(server.connection.socket) else { continue }
                    do throws(PostgresError) {
                        if try !server.connection.notifications(waitingUpTo: 0).isEmpty {
                            try pull(device, at: Date().timeIntervalSince1970)
                        }
                    } catch {
                        failed(error)
                        device.server = nil
                        device.retryAt = Date().timeIntervalSince1970 + 1
                    }
                }
            } else {
                // At least 20 ms: the devices due meanwhile are served together (a scan of the thread's devices each).
                Thread.sleep(forTimeInterval: Double(max(milliseconds, 20)) / 1_000)
            }
        }
        note {
            self.latencies += latencies
            self.polls += polls
            self.changes += changes
        }
    }
}
