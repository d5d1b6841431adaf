import Foundation
import Latchkey
import Synchronization

/// Eight threads looking items up for a fixed time while one thread imports items in transactions of 1,000
/// (as a restore or a sync pull does), on one `KeychainDatabase` — what the
/// agent does with eight clients reading and one writing (a thread per connection over one handle).
/// Measured three ways in one run: the readers alone; the readers with the writer, on the pool (reads on
/// reader connections of their own); and the readers with the writer with every read on the writer's
/// connection, one at a time — the design before the pool — so the report shows whether reads queue behind
/// writes.
struct ConcurrentReadWorkload {
    let path: String
    let size: Int
    /// How long each configuration runs.
    let duration: Duration
    let caller: CallerIdentity
    let passphrase: Passphrase
    static let readers = 8
    /// Items per write transaction: the writer imports, as a restore or a sync pull does.
    static let writeBatch = 1_000

    enum Configuration: String, CaseIterable, Codable, Sendable {
        case alone = "8 readers, no writer"
        case pool = "8 readers + 1 importing writer (reader connections)"
        case oneConnection = "8 readers + 1 importing writer, every read on the writer's connection (before the pool)"
    }

    func run() throws -> [ConcurrentReadResult] {
        try Configuration.allCases.map(measure)
    }

    private func measure(_ configuration: Configuration) throws -> ConcurrentReadResult {
        let keychain = try KeychainDatabase.open(at: path, readerConnections: configuration == .oneConnection ? 0 : 4)
        try keychain.unlock(with: passphrase)
        let finished = Atomic<Int>(0)
        let writes = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        let latencies = Mutex<[Double]>([])
        let done = DispatchGroup()
        let start = now()

        if configuration != .alone {
            done.enter()
            let writer = Thread { [size, caller] in
                defer { done.leave() }
                // Past every item the other workloads and the other configurations made.
                var next = size * 10 + (Configuration.allCases.firstIndex(of: configuration) ?? 0) * 100_000_000
                while finished.load(ordering: .acquiring) < Self.readers {
                    let batch = (next..<(next + Self.writeBatch)).map { index in
                        NewItem(
                            .genericPassword,
                            attributes: [
                                .service: .string("import-\(index / 10)"), .account: .string("account-\(index)"),
                            ], data: Data(repeating: UInt8(truncatingIfNeeded: index), count: 32))
                    }
                    next += Self.writeBatch
                    do {
                        try keychain.addAll(batch, caller: caller)
                        writes.add(Self.writeBatch, ordering: .relaxed)
                    } catch {
                        failures.withLock { $0.append("write: \(error)") }
                        return
                    }
                }
            }
            writer.start()
        }
        for reader in 0..<Self.readers {
            done.enter()
            let thread = Thread { [size, caller, duration] in
                defer {
                    finished.add(1, ordering: .releasing)
                    done.leave()
                }
                var mine: [Double] = []
                var generator = SystemRandomNumberGenerator()
                let deadline = ContinuousClock.now + duration
                while ContinuousClock.now < deadline {
                    let index = Int.random(in: 0..<size, using: &generator)
                    let query = ItemQuery(
                        .genericPassword,
                        matching: [
                            .service: .string("service-\(index / 10)"), .account: .string("account-\(index)"),
                        ], returning: .data)
                    do {
                        mine.append(
                            try time {
                                guard try keychain.copyMatching(query, caller: caller).count == 1 else {
                                    throw KeychainError(.internal, "reader \(reader) found no item \(index)")
                                }
                            })
                    } catch {
                        failures.withLock { $0.append("read: \(error)") }
                        return
                    }
                }
                latencies.withLock { $0.append(contentsOf: mine) }
            }
            thread.start()
        }
        done.wait()
        let seconds = Double(now() - start) / 1e9
        if let failure = failures.withLock({ $0.first }) {
            throw KeychainError(.internal, "\(configuration.rawValue): \(failure)")
        }
        return ConcurrentReadResult(
            configuration: configuration, reads: Samples(latencies.withLock { $0 }),
            writes: writes.load(ordering: .relaxed), seconds: seconds)
    }
}

/// One configuration's figures: every read's latency, and the writer's progress meanwhile.
struct ConcurrentReadResult: Codable, Sendable {
    var configuration: ConcurrentReadWorkload.Configuration
    var reads: Samples
    var writes: Int
    var seconds: Double

    var readsPerSecond: Double { Double(reads.nanoseconds.count) / seconds }
    /// Items the writer stored per second.
    var writesPerSecond: Double { Double(writes) / seconds }
}
