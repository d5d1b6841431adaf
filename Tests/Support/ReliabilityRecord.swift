import Foundation

/// The counts of a reliability trial, written as JSON for docs/bench/reliability.json when
/// `LATCHKEY_RELIABILITY_DIR` names a directory (`script/reliability` sets it and merges the files): every
/// published reliability figure is what a committed test counted, never a number typed into a document.
public enum ReliabilityRecord {
    /// One outcome of a trial: how often it happened, and whether it is a failure (one that must not).
    public struct Outcome: Codable, Sendable {
        public var label: String
        public var count: Int
        public var failure: Bool

        public init(_ label: String, _ count: Int, failure: Bool = false) {
            self.label = label
            self.count = count
            self.failure = failure
        }
    }

    struct Trial: Codable {
        var name: String
        var unit: String
        var outcomes: [Outcome]
    }

    /// Writes trial `id`'s counts (when the variable is set; otherwise does nothing).
    public static func write(_ id: String, name: String, unit: String, _ outcomes: [Outcome]) throws {
        guard let directory = ProcessInfo.processInfo.environment["LATCHKEY_RELIABILITY_DIR"], !directory.isEmpty else {
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(Trial(name: name, unit: unit, outcomes: outcomes))
            .write(to: URL(fileURLWithPath: directory + "/" + id + ".json"), options: .atomic)
    }
}
