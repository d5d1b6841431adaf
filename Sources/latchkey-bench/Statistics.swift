import Foundation

/// Timing samples of one workload, in nanoseconds.
struct Samples: Codable, Sendable {
    var nanoseconds: [Double]

    init(_ nanoseconds: [Double] = []) { self.nanoseconds = nanoseconds }

    func percentile(_ p: Double) -> Double {
        guard !nanoseconds.isEmpty else { return .nan }
        let sorted = nanoseconds.sorted()
        let rank = p * Double(sorted.count - 1)
        let low = Int(rank.rounded(.down))
        let high = Int(rank.rounded(.up))
        return sorted[low] + (sorted[high] - sorted[low]) * (rank - Double(low))
    }

    var median: Double { percentile(0.5) }
    var p10: Double { percentile(0.1) }
    var p90: Double { percentile(0.9) }
    var operationsPerSecond: Double { 1e9 / median }
}

/// Monotonic nanoseconds.
func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

/// Times `body` once.
func time(_ body: () throws -> Void) rethrows -> Double {
    let start = now()
    try body()
    return Double(now() - start)
}

/// Peak resident memory of this process in bytes.
func peakMemoryBytes() -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return usage.ru_maxrss * 1024
}

/// The total size of the files whose names start with `prefix` in `directory`.
func diskBytes(directory: String, prefix: String) -> Int {
    // A directory that cannot be listed holds no files the bench can count: zero, as for an empty one.
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return names.filter { $0.hasPrefix(prefix) }.reduce(0) { total, name in
        let size = (try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? NSNumber)?
            .intValue
        return total + (size ?? 0)
    }
}

/// Formats nanoseconds for a table: "812 ns", "41.2 µs", "3.10 ms", "1.52 s".
func formatDuration(_ nanoseconds: Double) -> String {
    if nanoseconds.isNaN { return "–" }
    if nanoseconds < 0 { return "−" + formatDuration(-nanoseconds) }  // A difference can be negative.
    if nanoseconds < 1_000 { return String(format: "%.0f ns", nanoseconds) }
    if nanoseconds < 1_000_000 { return String(format: "%.1f µs", nanoseconds / 1_000) }
    if nanoseconds < 1_000_000_000 { return String(format: "%.2f ms", nanoseconds / 1_000_000) }
    return String(format: "%.2f s", nanoseconds / 1_000_000_000)
}

/// Formats a rate: "12.3k/s".
func formatRate(_ perSecond: Double) -> String {
    if perSecond.isNaN || perSecond.isInfinite { return "–" }
    if perSecond >= 1_000_000 { return String(format: "%.2fM/s", perSecond / 1_000_000) }
    if perSecond >= 1_000 { return String(format: "%.1fk/s", perSecond / 1_000) }
    return String(format: "%.1f/s", perSecond)
}

/// Runs `executable` to completion and returns its standard output; a failure ends the benchmark with `what`.
func standardOutput(of executable: String, _ arguments: [String], what: String) throws -> Data {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { fail("\(what) failed (status \(process.terminationStatus))") }
    return data
}
