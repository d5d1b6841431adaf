import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// Many threads on one handle, several handles on one file, and several processes on one file: no lost
/// update, and no "database is locked" reaching a caller.
@Suite(.dedicatedThreads) struct ConcurrencyTests {
    let directory = TemporaryDirectory()

    @Test func manyThreadsShareOneHandle() async throws {
        let keychain = KeychainDatabase.inMemory()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<50 {
                        let account = "w\(worker)-\(index)"
                        try keychain.add(
                            Fixture.password(service: "threads", account: account, secret: "v1"), caller: Fixture.app)
                        try keychain.update(
                            Fixture.query(service: "threads", account: account, returning: []),
                            with: ItemChanges(data: Data("v2-\(account)".utf8)), caller: Fixture.app)
                        let found = try keychain.copyMatching(
                            Fixture.query(service: "threads", account: account),
                            caller: Fixture.app)
                        #expect(found.first?.data == Data("v2-\(account)".utf8))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(
            try keychain.copyMatching(
                Fixture.query(service: "threads", limit: .all, returning: []),
                caller: Fixture.app
            ).count == 400)
    }

    @Test func severalHandlesOnOneFileSeeEachOthersWrites() async throws {
        let path = directory.file("shared.keychain")
        _ = try Fixture.newKeychain(in: directory, name: "shared.keychain")
        let handles = try (0..<4).map { _ in
            let handle = try KeychainDatabase.open(at: path)
            try handle.unlock(with: Passphrase(Fixture.passphrase))
            return handle
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (worker, handle) in handles.enumerated() {
                group.addTask {
                    for index in 0..<15 {
                        try handle.add(
                            Fixture.password(service: "handles", account: "h\(worker)-\(index)"), caller: Fixture.app)
                    }
                }
            }
            try await group.waitForAll()
        }
        for handle in handles {
            #expect(
                try handle.copyMatching(
                    Fixture.query(service: "handles", limit: .all, returning: []),
                    caller: Fixture.app
                ).count == 60)
        }
    }

    @Test func severalProcessesWriteOneFileWithoutLosingAnUpdate() async throws {
        let path = directory.file("processes.keychain")
        _ = try Fixture.newKeychain(in: directory, name: "processes.keychain")
        let outputs = try await withThrowingTaskGroup(of: HelperProcess.Output.self) { group in
            for worker in 0..<4 {
                group.addTask { try HelperProcess.run(["adder", path, Fixture.passphrase, "p\(worker)", "25"]) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        for output in outputs {
            #expect(output.status == 0, "\(output.stderr)")
            #expect(output.stdout == "done\n")
        }
        let keychain = try KeychainDatabase.open(at: path)
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        let helper = CallerIdentity(applicationIdentifier: "com.example.helper")
        let all = try keychain.copyMatching(
            ItemQuery(.genericPassword, matching: [.service: .string("crash")], limit: .all, returning: .data),
            caller: helper)
        #expect(all.count == 100)
        #expect(all.allSatisfy { $0.data == Data("v2".utf8) })
        #expect(try keychain.verifyIntegrity().isHealthy)
    }

    /// Four processes of two threads each run random adds, updates, upserts, deletes and reads on their own
    /// keys of one file. Every status is the one a serial model of those keys predicts (so no busy or locked
    /// error leaks out), and the file ends up exactly as the union of the models. `LATCHKEY_SOAK=1` runs
    /// eight processes of 1,500 operations per thread.
    @Test func mixedOperationsFromProcessesAndThreadsEqualASerialModel() async throws {
        let soak = ProcessInfo.processInfo.environment["LATCHKEY_SOAK"] == "1"
        let path = directory.file("mixed.keychain")
        _ = try Fixture.newKeychain(in: directory, name: "mixed.keychain")
        let workers = soak ? 8 : 4
        let operations = soak ? 1_500 : 150
        var generator = TestSeed.generator("ConcurrencyTests.mixed")
        let seeds = (0..<workers).map { _ in generator.next() }
        let outputs = try await withThrowingTaskGroup(of: HelperProcess.Output.self) { group in
            for worker in 0..<workers {
                group.addTask {
                    try HelperProcess.run([
                        "mixer", path, Fixture.passphrase, "w\(worker)", "\(seeds[worker])",
                        "\(operations)",
                    ])
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        var expected: [String: String] = [:]
        for output in outputs {
            #expect(output.status == 0, "\(output.stderr)")
            #expect(output.stdout.hasSuffix("done\n"))
            for line in output.stdout.split(separator: "\n") where line.hasPrefix("final ") {
                let parts = line.split(separator: " ")
                expected[String(parts[1])] = String(parts[2])
            }
        }
        let keychain = try KeychainDatabase.open(at: path)
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        #expect(try keychain.verifyIntegrity().isHealthy)
        let helper = CallerIdentity(applicationIdentifier: "com.example.helper")
        var actual: [String: String] = [:]
        do throws(KeychainError) {
            for item in try keychain.copyMatching(
                ItemQuery(
                    .genericPassword, matching: [.service: .string("crash")], limit: .all,
                    returning: [.attributes, .data]),
                caller: helper)
            {
                actual[item[.account]?.stringValue ?? "?"] = item.data.map { String(decoding: $0, as: UTF8.self) }
            }
        } catch {
            #expect(error.status == .itemNotFound, "\(error)")
        }
        #expect(expected.count > workers * 5, "the workers left items behind")
        #expect(actual == expected)
        print(
            "ConcurrencyTests: \(workers) processes × 2 threads × \(operations) operations = \(workers * 2 * operations); "
                + "\(actual.count) items left, \(actual == expected ? "equal to" : "DIFFERENT from") the serial model")
        let keys = Set(actual.keys).union(expected.keys)
        let differing = keys.filter { actual[$0] != expected[$0] }.count
        try ReliabilityRecord.write(
            "7-concurrency", name: "Concurrency: \(workers) processes x 2 threads",
            unit:
                "keys after \((workers * 2 * operations).formatted(.number.locale(Locale(identifier: "en_US")))) operations",
            [
                .init("as the serial model", keys.count - differing),
                .init("different from the model", differing, failure: true),
            ])
    }
}
