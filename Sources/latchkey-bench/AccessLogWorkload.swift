import Foundation
import Latchkey

/// Issue 53, point 5: what the access log costs a find through the agent — one item's password found by
/// service and account, through a latchkeyd that writes the log and one started with `--no-access-log`,
/// taken in turn in ten blocks (as `PKIAgentWorkloads.measure`) — and how large the log grows per 100,000
/// accesses (entries appended through the engine, the file measured after a checkpoint).
struct AccessLogWorkload {
    let samples: Int

    struct Results {
        var logged: Samples
        var unlogged: Samples
        var bytesPerEntry: Double
        var entries: Int
    }

    func run() throws -> Results {
        let directory = NSTemporaryDirectory() + "/latchkey-bench-log-\(ProcessInfo.processInfo.processIdentifier)"
        for side in ["on", "off"] {
            try FileManager.default.createDirectory(
                atPath: directory + "/" + side, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }
        defer { try? FileManager.default.removeItem(atPath: directory) }  // Scratch files; a leftover only costs disk.
        let on = try RunningAgent(directory: directory + "/on")
        defer { on.stop() }
        let off = try RunningAgent(directory: directory + "/off", arguments: ["--no-access-log"])
        defer { off.stop() }
        let query = ItemQuery(
            .genericPassword, matching: [.service: .string("bench"), .account: .string("alice")], returning: .data)
        for agent in [on, off] {
            _ = try agent.service.add(
                NewItem(
                    .genericPassword, attributes: [.service: .string("bench"), .account: .string("alice")],
                    data: Data(count: 32)), returning: [])
        }
        let row = try PKIAgentWorkloads.measure(
            "find", samples, local: { _ = try off.service.copyMatching(query) },
            agent: { _ = try on.service.copyMatching(query) })

        // Growth: entries as a find through the agent's socket writes them, appended in batches and folded
        // from the journal into the table, as the agent does every second; the files measured empty and full,
        // each time closed (the WAL checkpointed into the database).
        let growth = directory + "/growth.keychain"
        _ = try KeychainDatabase.create(at: growth, passphrase: PKIAgentWorkloads.passphrase, keyDerivation: .minimum)
        let before = diskBytes(directory: directory, prefix: "growth.keychain")
        let entry = AccessLogEntry(
            caller: AccessLogEntry.Caller(
                program: "/usr/bin/a-program-of-typical-length", identity: "executable 1a2b3c4d…", pid: 123_456,
                uid: 1_000, frontEnd: "the agent's socket"),
            operation: .read,
            item: AccessLogEntry.Item(
                reference: Data(repeating: 1, count: 32), itemClass: .genericPassword,
                names: "service=bench account=alice"),
            allowed: true, reason: "its access groups")
        let entries = 20_000
        do {
            let keychain = try KeychainDatabase.open(at: growth)
            try keychain.unlock(with: PKIAgentWorkloads.passphrase)
            for _ in 0..<(entries / 500) { try keychain.appendToAccessLog(Array(repeating: entry, count: 500)) }
            try keychain.foldAccessJournal()
        }
        let after = diskBytes(directory: directory, prefix: "growth.keychain")
        return Results(
            logged: row.agent, unlogged: row.inProcess, bytesPerEntry: Double(after - before) / Double(entries),
            entries: entries)
    }

    static func render(_ results: Results, command: String) -> String {
        func p99(_ samples: Samples) -> String { formatDuration(samples.percentile(0.99)) }
        let perHundredThousand = results.bytesPerEntry * 100_000 / 1_048_576
        let cap = results.bytesPerEntry * Double(KeychainDatabase.accessLogLimit) / 1_048_576
        return """
            ## The access log's cost (issue 53)

            `\(command)`: a password found through latchkeyd (service and account, its data returned), \
            \(results.logged.nanoseconds.count) finds each, with the access log and with `--no-access-log`.

            | find through the agent | median | p99 |
            |---|---|---|
            | access log on | \(formatDuration(results.logged.median)) | \(p99(results.logged)) |
            | access log off | \(formatDuration(results.unlogged.median)) | \(p99(results.unlogged)) |

            The log's cost per find: \(formatDuration(results.logged.median - results.unlogged.median)) at the \
            median (a read's entry appended to the log's journal with one write before the answer, folded into the \
            keychain every second). It grows \
            \(String(format: "%.0f", results.bytesPerEntry)) bytes per entry (measured over \(results.entries) \
            entries): \(String(format: "%.1f", perHundredThousand)) MiB per 100,000 accesses — but it keeps only \
            the newest \(KeychainDatabase.accessLogLimit) entries, so it stops growing at about \
            \(String(format: "%.1f", cap)) MiB.

            """
    }
}
