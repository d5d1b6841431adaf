import Foundation

extension Report {
    /// The CLI's start (issue 31 part 6): `latchkey --version` and a find through the agent beside a statically
    /// linked Swift program that imports Foundation and prints a line, run in turn in every round by
    /// bench/peers.py (os.posix_spawn, output read to the end), with /bin/true as the floor of starting any
    /// process from that driver; the goal is 1.3× the Foundation program's median.
    static func cliStart(_ peers: PeerResults) -> [String] {
        let tool = "CLI start"
        let baselineName = "Foundation program"
        guard let baseline = peers.median(tool, baselineName) else { return [] }
        let rows = [
            (baselineName, "a static Swift program: `import Foundation`, `Date`, `print` (bench/start)"),
            ("latchkey --version", "`latchkey --version`"),
            (
                "latchkey find (agent)",
                "`latchkey find-generic-password -s … -a … -w` through latchkeyd (registered CLI)"
            ),
            ("process start (/bin/true)", "`/bin/true` (the floor: starting any process from the driver)"),
        ]
        var lines = [
            "", "The CLI's start beside a static Foundation program (issue 31), each run in turn in every round:", "",
            "| program | median | p10 | p90 | samples | ÷ Foundation program |", "|---|---:|---:|---:|---:|---:|",
        ]
        var verdicts: [String] = []
        for (workload, name) in rows {
            guard let samples = peers.tools[tool]?[workload] else { continue }
            let ratio = samples.median / baseline
            lines.append(
                "| \(name) | \(formatDuration(samples.median)) | \(formatDuration(samples.p10)) | \(formatDuration(samples.p90)) | \(samples.nanoseconds.count) | \(String(format: "%.2f", ratio))× |"
            )
            if workload.hasPrefix("latchkey") {
                verdicts.append(
                    "`\(workload)` \(String(format: "%.2f", ratio))× — \(ratio <= 1.3 ? "met" : "**not met**")")
            }
        }
        lines += [
            "", "Goal (issue 31): within 1.3× of the Foundation program: " + verdicts.joined(separator: "; ") + ".",
        ]
        return lines + [""]
    }
}
