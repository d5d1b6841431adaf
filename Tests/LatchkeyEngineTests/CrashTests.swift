import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A writer killed with SIGKILL at a random moment: after reopening, every acknowledged write is there,
/// every item is its old or its new version, and the file passes the integrity check.
///
/// The default run kills 12 writers (and 4 batch writers); `LATCHKEY_SOAK=1` kills 300 (and 100).
@Suite(.serialized, .dedicatedThreads) struct CrashTests {
    static var trials: Int { ProcessInfo.processInfo.environment["LATCHKEY_SOAK"] == "1" ? 300 : 12 }

    /// Reopens the keychain a killed writer left, checks it (every item decrypted), and returns it with
    /// every item of `service`, attributes and data.
    static func reopen(_ path: String, trial: Int, service: String, caller: CallerIdentity) throws
        -> (KeychainDatabase, [ItemResult])
    {
        let keychain = try KeychainDatabase.open(at: path)
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        let report = try keychain.verifyIntegrity()
        #expect(report.isHealthy, "trial \(trial): \(report)")
        // A writer killed before its first commit (on a loaded machine the first batch can take longer than
        // the random delay before the kill) leaves no item at all: an empty result, not a failure.
        do throws(KeychainError) {
            let stored = try keychain.copyMatching(
                ItemQuery(
                    .genericPassword, matching: [.service: .string(service)], limit: .all,
                    returning: [.attributes, .data]),
                caller: caller)
            return (keychain, stored)
        } catch {
            guard error.status == .itemNotFound else { throw error }
            return (keychain, [])
        }
    }

    @Test func killedWritersLoseNothingAcknowledged() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("crash.keychain")
        _ = try Fixture.newKeychain(in: directory, name: "crash.keychain")
        let helper = CallerIdentity(applicationIdentifier: "com.example.helper")
        var acknowledged: [String: Int] = [:]
        var generator = TestSeed.generator("CrashTests.killedWriters")
        var checked = 0
        var lost = 0
        var inFlightCommitted = 0

        for trial in 0..<Self.trials {
            let log = directory.file("writer-\(trial).log")
            #expect(FileManager.default.createFile(atPath: log, contents: nil))
            let errors = directory.file("writer-\(trial).errors")
            let process = try SpawnedProcess(
                HelperProcess.executable,
                ["writer", path, Fixture.passphrase, "\(UInt64.random(in: 1...UInt64.max, using: &generator))", "16"],
                environment: ProcessInfo.processInfo.environment, log: log, errors: errors)
            // Wait until the writer has opened the keychain, let it write for a random while, then kill it.
            let deadline = Date().addingTimeInterval(30)
            while !(String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: log))) ?? Data(), as: UTF8.self)
                .hasPrefix("ready")) && Date() < deadline && process.isRunning
            {
                Thread.sleep(forTimeInterval: 0.005)
            }
            Thread.sleep(forTimeInterval: Double.random(in: 0.002...0.25, using: &generator))
            process.stop(signal: SIGKILL)
            #expect(
                process.exitStatus == 128 + SIGKILL,
                "writer exited early: \(String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: errors))) ?? Data(), as: UTF8.self))"
            )

            let lines = String(decoding: try Data(contentsOf: URL(fileURLWithPath: log)), as: UTF8.self).split(
                separator: "\n")
            for line in lines where line.hasPrefix("ack ") {
                let parts = line.split(separator: " ")
                if parts.count == 3, let version = Int(parts[2]) { acknowledged[String(parts[1])] = version }
            }

            let (_, stored) = try Self.reopen(path, trial: trial, service: "crash", caller: helper)
            var versions: [String: Int] = [:]
            for item in stored {
                let account = try #require(item[.account]?.stringValue)
                let text = String(decoding: try #require(item.data), as: UTF8.self)
                #expect(text.hasPrefix("\(account)-"), "an item holds another item's value")
                versions[account] = Int(text.split(separator: "-").last ?? "")
            }
            for (key, version) in acknowledged {
                let found = versions[key] ?? 0
                // The write in flight at the kill may have committed without being acknowledged.
                #expect(
                    found == version || found == version + 1,
                    "trial \(trial): \(key) acknowledged \(version), found \(found)")
                checked += 1
                if found < version { lost += 1 }
                if found == version + 1 { inFlightCommitted += 1 }
                acknowledged[key] = found
            }
            for (key, version) in versions where acknowledged[key] == nil {
                #expect(version == 1, "trial \(trial): \(key) appeared at version \(version) without acknowledgements")
                acknowledged[key] = version
            }
        }
        #expect(acknowledged.values.reduce(0, +) > Self.trials, "the writers wrote something")
        print(
            "CrashTests: \(Self.trials) writers killed; \(checked) acknowledged versions checked after the kills, \(lost) lost; "
                + "the write in flight had committed \(inFlightCommitted) times; \(acknowledged.values.reduce(0, +)) writes in all"
        )
        try ReliabilityRecord.write(
            "1-crash", name: "Crash: SIGKILL while writing", unit: "kills",
            [
                .init("write in flight committed", inFlightCommitted),
                .init("write in flight absent", Self.trials - inFlightCommitted),
                .init(
                    "acknowledged writes lost (of \(checked.formatted(.number.locale(Locale(identifier: "en_US")))) checked)",
                    lost,
                    failure: true),
            ])
    }

    /// A process killed while adding batches (`addAll`, one transaction each): every acknowledged batch is
    /// whole, the batch in flight is whole or absent, and each is found through its index entries.
    @Test func killedBatchesAreAllOrNothing() throws {
        let directory = TemporaryDirectory()
        let helper = CallerIdentity(applicationIdentifier: "com.example.helper")
        let size = 200
        var path = ""
        var next = 0
        var committed = 0
        var inFlightWhole = 0
        var inFlightAbsent = 0
        var partial = 0
        var generator = TestSeed.generator("CrashTests.killedBatches")
        let trials = max(4, Self.trials / 3)
        for trial in 0..<trials {
            // A fresh keychain every ten trials, so checking every item after each kill stays quick.
            if trial % 10 == 0 {
                committed += next
                path = directory.file("batches-\(trial / 10).keychain")
                _ = try Fixture.newKeychain(in: directory, name: "batches-\(trial / 10).keychain")
                next = 0
            }
            let log = directory.file("batcher-\(trial).log")
            let process = try SpawnedProcess(
                HelperProcess.executable, ["batcher", path, Fixture.passphrase, "\(next)", "\(size)"],
                environment: ["PATH": "/usr/bin:/bin"], log: log)
            let deadline = Date().addingTimeInterval(30)
            while !((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").hasPrefix("ready"), Date() < deadline,
                process.isRunning
            {
                Thread.sleep(forTimeInterval: 0.005)
            }
            Thread.sleep(forTimeInterval: Double.random(in: 0.01...0.4, using: &generator))
            process.stop(signal: SIGKILL)
            let acknowledged = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
                .compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil }

            let (keychain, stored) = try Self.reopen(path, trial: trial, service: "batch", caller: helper)
            var counts: [Int: Int] = [:]
            for item in stored {
                let account = try #require(item[.account]?.stringValue)
                #expect(item.data == Data(account.utf8), "an item holds another item's value")
                let batch = try #require(Int(account.dropFirst().prefix { $0 != "-" }))
                counts[batch, default: 0] += 1
            }
            for (batch, count) in counts where count != size {
                partial += 1
                Issue.record("trial \(trial): batch \(batch) has \(count) of \(size) items")
            }
            for batch in acknowledged {
                #expect(counts[batch] == size, "trial \(trial): acknowledged batch \(batch) is missing")
            }
            // The batch in flight at the kill: whole or absent (checked above); never a later one.
            let last = (acknowledged.last ?? next - 1) + 1
            #expect(counts.keys.allSatisfy { $0 <= last }, "trial \(trial): a batch after the one in flight")
            if counts[last] != nil { inFlightWhole += 1 } else { inFlightAbsent += 1 }
            if let batch = acknowledged.last {
                let byLabel = try keychain.copyMatching(
                    ItemQuery(.genericPassword, matching: [.label: .string("b\(batch)")], limit: .all), caller: helper)
                #expect(byLabel.count == size, "trial \(trial): batch \(batch) through its label index")
            }
            next = (counts.keys.max() ?? next - 1) + 1
        }
        committed += next
        print(
            "CrashTests: \(trials) batch writers killed, \(committed) batches of \(size) committed; the batch in flight was whole \(inFlightWhole) times and absent \(inFlightAbsent) times; \(partial) batches partial"
        )
        try ReliabilityRecord.write(
            "2-batch-crash", name: "Batch crash: SIGKILL mid-batch", unit: "kills",
            [
                .init("batch in flight whole", inFlightWhole), .init("batch in flight absent", inFlightAbsent),
                .init("batch partly written", partial, failure: true),
            ])
        #expect(committed > 0, "the batcher committed something")
    }
}
