import Foundation
import LatchkeyStorage

/// The report: per size, each workload's median, p10, p90 and rate for Latchkey and the floor, and the
/// ratio of the two medians; then the targets of issue 5, met or missed.
enum Report {
    static func machine() -> String {
        let cpu =
            ((try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? "")
            .split(separator: "\n").first { $0.hasPrefix("model name") }?.split(separator: ":").last
            .map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
        let memory =
            ((try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8)) ?? "")
            .split(separator: "\n").first { $0.hasPrefix("MemTotal") }?.split(separator: " ").dropFirst().first ?? "?"
        let kernel = ((try? String(contentsOfFile: "/proc/sys/kernel/osrelease", encoding: .utf8)) ?? "?")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let gib = (Double(memory) ?? 0) / 1024 / 1024
        return
            "\(cpu), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(String(format: "%.0f", gib)) GiB, Linux \(kernel), SQLite \(Connection.libraryVersion)"
    }

    static func render(_ results: [SizeResult], peers: PeerResults?, command: String) -> String {
        var lines: [String] = []
        lines.append("Machine: \(machine())")
        lines.append("Command: `\(command)`")
        lines.append("")
        for result in results {
            lines.append("### \(result.size.formatted()) items")
            lines.append("")
            lines.append(
                String(
                    format: "Peak memory %.0f MiB; disk %.0f bytes per item (floor %.0f; floor rows of %d bytes).",
                    Double(result.peakMemoryBytes) / 1_048_576, result.latchkeyDiskBytesPerItem,
                    result.floorDiskBytesPerItem, result.floorRowBytes))
            lines.append("")
            lines.append("| workload | samples | median | p10 | p90 | rate | floor median | × floor |")
            lines.append("|---|---:|---:|---:|---:|---:|---:|---:|")
            for workload in Workload.allCases {
                guard let ours = result.latchkey(workload.rawValue) else { continue }
                let floor = result.floor(workload.rawValue)
                let per = Double(ours.itemsPerSample)
                let ratio = floor.map { String(format: "%.2f", ours.medianPerItem / $0.medianPerItem) } ?? "–"
                let count =
                    ours.itemsPerSample > 1
                    ? "\(ours.samples.nanoseconds.count) × \(ours.itemsPerSample.formatted())"
                    : "\(ours.samples.nanoseconds.count)"
                lines.append(
                    "| \(workload.rawValue) | \(count) | \(formatDuration(ours.medianPerItem)) | \(formatDuration(ours.samples.p10 / per)) | \(formatDuration(ours.samples.p90 / per)) | \(formatRate(ours.itemsPerSecond)) | \(floor.map { formatDuration($0.medianPerItem) } ?? "–") | \(ratio) |"
                )
            }
            lines.append("")
            lines.append(contentsOf: concurrentReads(result))
        }
        lines.append(contentsOf: targets(results))
        if let peers {
            lines.append(contentsOf: tools(peers))
        }
        return lines.joined(separator: "\n")
    }

    /// Reads while one thread writes: each configuration's read latency, beside the readers alone.
    static func concurrentReads(_ result: SizeResult) -> [String] {
        guard let alone = result.concurrentReads.first(where: { $0.configuration == .alone }) else { return [] }
        var lines = [
            "Eight threads finding one item's data for a fixed time while one thread imports items (1,000 per transaction), on one handle:",
            "",
            "| configuration | reads | read median | p99 | p99.9 | slowest | reads/s (all readers) | × alone | items written/s |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for run in result.concurrentReads {
            lines.append(
                "| \(run.configuration.rawValue) | \(run.reads.nanoseconds.count) | \(formatDuration(run.reads.median)) | \(formatDuration(run.reads.percentile(0.99))) | \(formatDuration(run.reads.percentile(0.999))) | \(formatDuration(run.reads.percentile(1))) | \(formatRate(run.readsPerSecond)) | \(String(format: "%.2f", run.readsPerSecond / alone.readsPerSecond)) | \(run.writes == 0 ? "–" : formatRate(run.writesPerSecond)) |"
            )
        }
        return lines + [""]
    }

    /// Issue 5's targets, each with the measured figure.
    static func targets(_ results: [SizeResult]) -> [String] {
        var lines = ["### Targets", "", "| target | measured | met |", "|---|---|---|"]
        func row(_ target: String, _ measured: String, _ met: Bool?) {
            lines.append("| \(target) | \(measured) | \(met.map { $0 ? "yes" : "**no**" } ?? "not measured") |")
        }
        func ratio(_ result: SizeResult?, _ workload: Workload) -> Double? {
            guard let result, let ours = result.latchkey(workload.rawValue), let floor = result.floor(workload.rawValue)
            else { return nil }
            return ours.medianPerItem / floor.medianPerItem
        }
        let at100k = results.first { $0.size == 100_000 }
        let find = ratio(at100k, .findData)
        row(
            "find at 100k items within 3× the floor", find.map { String(format: "%.2f×", $0) } ?? "–",
            find.map { $0 <= 3 })
        let adds = results.compactMap { ratio($0, .durableAdd) }
        let worstAdd = adds.max()
        row(
            "durable add within 2× the floor's durable insert (every size)",
            worstAdd.map { String(format: "worst %.2f×", $0) } ?? "–", worstAdd.map { $0 <= 2 })
        let batchRates = results.compactMap { $0.latchkey(Workload.batchAdd.rawValue)?.itemsPerSecond }
        let slowestBatch = batchRates.min()
        row(
            "batch add of at least 50,000 items per second", slowestBatch.map { "slowest " + formatRate($0) } ?? "–",
            slowestBatch.map { $0 >= 50_000 })
        let smallest = results.min { $0.size < $1.size }
        let largest = results.max { $0.size < $1.size }
        if let smallest, let largest, smallest.size < largest.size {
            for workload in [Workload.findData, .open] {
                if let small = smallest.latchkey(workload.rawValue), let large = largest.latchkey(workload.rawValue) {
                    let growth = large.medianPerItem / small.medianPerItem
                    row(
                        "\(workload.rawValue) at \(largest.size.formatted()) within 1.5× of \(smallest.size.formatted())",
                        String(format: "%.2f×", growth), largest.size >= 1_000_000 ? growth <= 1.5 : nil)
                }
            }
        }
        return lines + [""]
    }

    /// The tools' table: Latchkey's CLI and Swift API beside the peers, and issue 6's goal.
    static func tools(_ peers: PeerResults) -> [String] {
        let agentCLI = "latchkey CLI (agent)"
        var lines = [
            "### Latchkey beside the tools people use on Linux (\(peers.size.formatted()) items each)", "",
            "Every per-process tool is started by the same driver (bench/peers.py), one process per operation.", "",
            "| tool | find median | find p10 | find p90 | add median | delete median | find ÷ latchkey CLI (agent) |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        let reference = peers.median(agentCLI, "find")
        let order = [
            agentCLI, "latchkey CLI (embedded)", "Swift API in-process (agent)", "Swift API in-process (embedded)",
            "process start (/bin/true)", "secret-tool", "keyring (Secret Service)", "pass", "keepassxc-cli",
            "keyring (cryptfile)", "keyring (alt plaintext file)",
        ]
        // Every tool with a find; the KDF-only measurement goes into the sentence below the table.
        let tools = (order.filter { peers.tools[$0] != nil } + peers.tools.keys.filter { !order.contains($0) }.sorted())
            .filter { peers.tools[$0]?["find"] != nil }
        for tool in tools {
            let find = peers.tools[tool]?["find"]
            let cell = { (workload: String) in peers.median(tool, workload).map(formatDuration) ?? "–" }
            var ratio = "–"
            if let median = find?.median, let reference { ratio = String(format: "%.2f", median / reference) }
            lines.append(
                "| \(tool) | \(cell("find")) | \(find.map { formatDuration($0.p10) } ?? "–") | \(find.map { formatDuration($0.p90) } ?? "–") | \(cell("add")) | \(cell("delete")) | \(ratio) |"
            )
        }
        lines.append("")
        if let embedded = peers.median("latchkey CLI (embedded)", "find"),
            let opening = peers.median("latchkey CLI (embedded)", "open")
        {
            let derivation =
                peers.median("Argon2id unlock of this keychain", "unlock").map {
                    " (Argon2id alone, measured in-process: \(formatDuration($0)))"
                } ?? ""
            lines.append(
                String(
                    format:
                        "The embedded CLI derives the key from the passphrase in every process. Of its find (%@), starting, looking for an agent and opening the keychain take %@ (`latchkey show-keychain-info`: the same process without a key derivation); the other %@ (%.0f%%) is the key derivation%@ and the lookup.",
                    formatDuration(embedded), formatDuration(opening), formatDuration(max(0, embedded - opening)),
                    100 * max(0, embedded - opening) / embedded, derivation))
        }
        lines.append(contentsOf: inProcessVersusPeers(peers))
        lines.append(contentsOf: secretServiceVersusGnomeKeyring(peers))
        lines.append(contentsOf: gitCredentialFill(peers))
        lines.append(contentsOf: cliStart(peers))
        if let ours = reference, let theirs = peers.median("secret-tool", "find") {
            let met = ours < theirs / 2
            lines.append(
                String(
                    format:
                        "Goal (issue 6): a CLI find through the agent in under half of `secret-tool lookup`'s time: %@ against %@ (%.2f×) — %@.",
                    formatDuration(ours), formatDuration(theirs), ours / theirs, met ? "met" : "**not met**"))
        } else {
            lines.append(
                "Goal (issue 6): a CLI find through the agent in under half of `secret-tool lookup`'s time — **not measured**: "
                    + (reference == nil ? "no figure for the CLI through the agent" : "no figure for secret-tool")
                    + " (see the notes).")
        }
        for (key, value) in peers.notes.sorted(by: { $0.key < $1.key }) {
            lines.append("- \(key): \(value)")
        }
        return lines + [""]
    }

    /// Issue 12's goal: Latchkey's Secret Service beside GNOME Keyring's, the same clients on the same kind
    /// of private bus — every figure ahead, and a GetSecret round trip at most half of GNOME Keyring's.
    static func secretServiceVersusGnomeKeyring(_ peers: PeerResults) -> [String] {
        let rows: [(String, String, String, String)] = [
            ("secret-tool lookup (per process)", "secret-tool", "secret-tool (Latchkey)", "find"),
            ("secret-tool store (per process)", "secret-tool", "secret-tool (Latchkey)", "add"),
            ("secret-tool clear (per process)", "secret-tool", "secret-tool (Latchkey)", "delete"),
            (
                "keyring get_password (in process)", "keyring (Secret Service)", "keyring (Secret Service) (Latchkey)",
                "find"
            ),
            (
                "keyring set_password (in process)", "keyring (Secret Service)", "keyring (Secret Service) (Latchkey)",
                "add"
            ),
            (
                "GetSecret (in process)", "Secret Service round trips (GNOME Keyring)",
                "Secret Service round trips (Latchkey)", "GetSecret"
            ),
            (
                "CreateItem (in process)", "Secret Service round trips (GNOME Keyring)",
                "Secret Service round trips (Latchkey)", "CreateItem"
            ),
            (
                "GetSecrets, one call (in process)", "Secret Service round trips (GNOME Keyring)",
                "Secret Service round trips (Latchkey)", "GetSecrets"
            ),
        ]
        let floors = [
            (
                "GetSecrets refused at once (no such session): the call's shape, no provider work",
                "Secret Service round trips (GNOME Keyring)",
                "Secret Service round trips (Latchkey)", "GetSecretsRefused"
            ),
            (
                "Peer.Ping: the client and the bus, no provider work", "Secret Service round trips (GNOME Keyring)",
                "Secret Service round trips (Latchkey)", "Ping"
            ),
        ]
        var lines = [
            "", "#### The Secret Service: Latchkey beside GNOME Keyring", "",
            "The same clients (secret-tool, Python keyring, secretstorage) against each provider on a private D-Bus session of its own, "
                + "both running at once and measured in five alternating rounds.", "",
            "| operation | GNOME Keyring median | Latchkey median | Latchkey ÷ GNOME Keyring |", "|---|---:|---:|---:|",
        ]
        var ratios: [String: Double] = [:]
        for (name, gnome, latchkey, workload) in rows {
            let theirs = peers.median(gnome, workload)
            let ours = peers.median(latchkey, workload)
            var ratio = "–"
            if let theirs, let ours {
                ratios[name] = ours / theirs
                ratio = String(format: "%.2f", ours / theirs)
            }
            lines.append(
                "| \(name) | \(theirs.map(formatDuration) ?? "–") | \(ours.map(formatDuration) ?? "–") | \(ratio) |")
        }
        for floor in floors {
            let floorTheirs = peers.median(floor.1, floor.3)
            let floorOurs = peers.median(floor.2, floor.3)
            lines.append(
                "| \(floor.0) | \(floorTheirs.map(formatDuration) ?? "–") | \(floorOurs.map(formatDuration) ?? "–") | – |"
            )
        }
        lines.append("")
        if ratios.count == rows.count, let getSecret = ratios["GetSecret (in process)"],
            let oneCall = ratios["GetSecrets, one call (in process)"]
        {
            let behind = ratios.filter { $0.value >= 1 }.keys.sorted()
            var goal =
                "Goal (issue 12): every figure ahead of GNOME Keyring — "
                + (behind.isEmpty ? "met" : "**not met** (\(behind.joined(separator: ", ")))")
                + String(
                    format:
                        "; GetSecret at most half of GNOME Keyring's: %.2f× (secretstorage's get_secret), %.2f× (one GetSecrets call) — %@.",
                    getSecret, oneCall, min(getSecret, oneCall) <= 0.5 ? "met" : "**not met**")
            if let theirs = peers.median(rows[rows.count - 1].1, "GetSecrets"),
                let refused = peers.median(floors[0].2, floors[0].3), let ping = peers.median(floors[1].2, floors[1].3)
            {
                goal += String(
                    format:
                        " The floor under any provider's GetSecrets call here, against GNOME Keyring's call: %.2f× for the same call "
                        + "refused at once by Latchkey (the client and the bus alone), %.2f× for Peer.Ping.",
                    refused / theirs, ping / theirs)
            }
            lines.append(goal)
        } else {
            lines.append(
                "Goal (issue 12): Latchkey's Secret Service beside GNOME Keyring — **not measured** (a provider failed: see the notes)."
            )
        }
        return lines
    }

    /// Issue 5's in-process target: every figure of the Swift API (embedded, and through the agent) beside
    /// every in-process peer's, as ratios.
    static func inProcessVersusPeers(_ peers: PeerResults) -> [String] {
        let expectedOurs = ["Swift API in-process (embedded)", "Swift API in-process (agent)"]
        let expectedTheirs = ["keyring (alt plaintext file)", "keyring (cryptfile)", "keyring (Secret Service)"]
        let ours = expectedOurs.filter { peers.tools[$0] != nil }
        let theirs = expectedTheirs.filter { peers.tools[$0] != nil }
        // A target over the tools that happened to run is not the target: say what is missing instead.
        let missing = (expectedOurs + expectedTheirs).filter { tool in
            ["find", "add", "delete"].contains { peers.median(tool, $0) == nil }
        }
        guard missing.isEmpty else {
            return [
                "",
                "Target (issue 5): every in-process figure faster than every peer's — **not measured**: no complete "
                    + "figures for " + missing.joined(separator: ", ") + " (see the notes).",
            ]
        }
        var lines = [
            "", "In-process, peer ÷ Latchkey (above 1: Latchkey is faster):", "",
            "| Latchkey | workload | " + theirs.joined(separator: " | ") + " |",
            "|---|---|" + theirs.map { _ in "---:" }.joined(separator: "|") + "|",
        ]
        var slowest = Double.infinity
        for tool in ours {
            for workload in ["find", "add", "delete"] {
                guard let mine = peers.median(tool, workload) else { continue }
                let cells = theirs.map { peer -> String in
                    guard let other = peers.median(peer, workload) else { return "–" }
                    slowest = min(slowest, other / mine)
                    return String(format: "%.1f×", other / mine)
                }
                lines.append("| \(tool) | \(workload) | " + cells.joined(separator: " | ") + " |")
            }
        }
        lines.append("")
        lines.append(
            String(
                format:
                    "Target (issue 5): every in-process figure faster than every peer's — smallest ratio %.1f× (%@).",
                slowest, slowest > 1 ? "met" : "**not met**"))
        return lines
    }
}
