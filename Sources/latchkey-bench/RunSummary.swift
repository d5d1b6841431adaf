import Foundation

/// What one benchmark run found, reduced to the figures the report and the charts use (medians and
/// deciles per item, in nanoseconds): written by `--json FILE`, read back by `--plot DIR --from FILE`, so
/// the charts of docs/BENCHMARKS.md are drawn from a committed run without measuring again.
struct RunSummary: Codable, Sendable {
    /// One workload's figures, per item.
    struct Figure: Codable, Sendable, Equatable {
        var median: Double
        var p10: Double
        var p90: Double
    }

    /// Latchkey and the floor at one keychain size, by workload (`Workload` case names).
    struct Size: Codable, Sendable {
        var size: Int
        var latchkey: [String: Figure]
        var floor: [String: Figure]
    }

    /// The tools' comparison: per tool, per workload ("find", "add", "delete").
    struct Peers: Codable, Sendable {
        var size: Int
        var tools: [String: [String: Figure]]
    }

    var command: String
    var machine: String
    /// The commit measured, when the run says (script/bench passes it).
    var revision: String?
    var sizes: [Size]
    var peers: Peers?

    init(command: String, machine: String, revision: String?, results: [SizeResult], peers: PeerResults?) {
        self.command = command
        self.machine = machine
        self.revision = revision
        func figures(_ workloads: [WorkloadResult]) -> [String: Figure] {
            var figures: [String: Figure] = [:]
            for workload in Workload.allCases {
                guard let result = workloads.first(where: { $0.name == workload.rawValue }) else { continue }
                let per = Double(result.itemsPerSample)
                figures[workload.key] = Figure(
                    median: result.medianPerItem, p10: result.samples.p10 / per,
                    p90: result.samples.p90 / per)
            }
            return figures
        }
        sizes = results.map { Size(size: $0.size, latchkey: figures($0.latchkey), floor: figures($0.floor)) }
        self.peers = peers.map { peers in
            Peers(
                size: peers.size,
                tools: peers.tools.mapValues { workloads in
                    workloads.filter { !$0.value.nanoseconds.isEmpty }
                        .mapValues { Figure(median: $0.median, p10: $0.p10, p90: $0.p90) }
                })
        }
    }

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try encoder.encode(self)
    }
}

extension Workload {
    /// The workload's name in a summary file (its case name: stable when its description changes).
    var key: String { String(describing: self) }
}

/// The reliability suite's figures (docs/bench/reliability.json): what each injected fault led to, as the
/// soak run counted it. The tests print these counts; the file records one run's.
struct ReliabilityFigures: Codable, Sendable {
    /// One outcome of a trial and how often it happened; `failure` outcomes are the ones that must not.
    struct Outcome: Codable, Sendable {
        var label: String
        var count: Int
        var failure: Bool
    }

    /// One bar: a trial's events and what became of them.
    struct Trial: Codable, Sendable {
        var name: String
        /// What one event is ("kills", "flips", "operations").
        var unit: String
        var outcomes: [Outcome]
    }

    /// Where the figures come from (the command and the commit).
    var source: String
    var trials: [Trial]
}
