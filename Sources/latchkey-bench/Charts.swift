import Foundation

/// SVG charts of a benchmark run (`latchkey-bench --plot DIR`): latency against keychain size beside the
/// floor, Latchkey beside the peers, and the reliability suite's outcomes. Plain SVG 1.1 with the text in
/// it, readable on GitHub and in any browser; every figure drawn is also written as a label or a tooltip.
enum Charts {
    static let latchkeyColor = "#1f5fbf"
    static let floorColor = "#8a8a8a"
    static let peerColor = "#c98a2b"
    static let font = "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""

    /// Writes every chart the run has figures for into `directory`; returns the files' names.
    static func write(_ run: RunSummary, reliability: ReliabilityFigures?, to directory: String) throws -> [String] {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var files: [(String, String)] = []
        if !run.sizes.isEmpty { files.append(("latency-by-size.svg", latencyBySize(run))) }
        if let peers = run.peers, !peers.tools.isEmpty { files.append(("peers.svg", peersChart(peers, run: run))) }
        if let reliability { files.append(("reliability.svg", reliabilityChart(reliability))) }
        for (name, svg) in files {
            try svg.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
        }
        return files.map(\.0)
    }

    // MARK: Latency against keychain size

    static let sizeWorkloads: [(Workload, String)] = [
        (.findData, "find one item's data"), (.findService, "find a service's 10 items (per item)"),
        (.durableAdd, "durable add"), (.batchAdd, "batch add (per item)"),
        (.update, "update one item"), (.delete, "delete one item"),
    ]

    /// One panel per workload: median per item (p10–p90 whiskers) against the number of items, Latchkey
    /// beside the floor, both axes logarithmic.
    static func latencyBySize(_ run: RunSummary) -> String {
        let panelWidth = 330.0
        let panelHeight = 230.0
        let columns = 2
        let rows = (sizeWorkloads.count + columns - 1) / columns
        let width = panelWidth * Double(columns) + 20
        let height = 70 + panelHeight * Double(rows) + 10
        var svg = SVG(width: width, height: height)
        svg.text(
            x: width / 2, y: 24, "Latency against keychain size: Latchkey beside the SQLite + libsodium floor",
            size: 15, anchor: "middle", weight: "bold")
        svg.text(x: width / 2, y: 44, subtitle(run), size: 11, anchor: "middle", color: "#555")
        legend(&svg, x: width / 2 - 110, y: 58, [("Latchkey", latchkeyColor, false), ("floor", floorColor, true)])
        let sizes = run.sizes.map(\.size).sorted()
        for (index, (workload, title)) in sizeWorkloads.enumerated() {
            let originX = 10 + Double(index % columns) * panelWidth
            let originY = 70 + Double(index / columns) * panelHeight
            let series: [(String, String, Bool, [(Int, RunSummary.Figure)])] = [
                (
                    "Latchkey", latchkeyColor, false,
                    run.sizes.compactMap { s in s.latchkey[workload.key].map { (s.size, $0) } }
                ),
                ("floor", floorColor, true, run.sizes.compactMap { s in s.floor[workload.key].map { (s.size, $0) } }),
            ]
            let values = series.flatMap { $0.3.flatMap { [$0.1.p10, $0.1.p90, $0.1.median] } }.filter { $0 > 0 }
            guard let low = values.min(), let high = values.max(), let first = sizes.first, let last = sizes.last else {
                continue
            }
            let plot = Frame(x: originX + 62, y: originY + 26, width: panelWidth - 80, height: panelHeight - 70)
            svg.text(x: plot.x + plot.width / 2, y: originY + 16, title, size: 12, anchor: "middle", weight: "bold")
            let yAxis = LogAxis(low: low / 1.3, high: high * 1.3)
            let xAxis = LogAxis(low: Double(first) / 1.6, high: Double(last) * 1.6)
            svg.rect(plot, stroke: "#bbb")
            var lastLabel = Double.infinity
            for tick in yAxis.ticks() {
                let y = plot.y + plot.height * (1 - yAxis.position(tick))
                guard lastLabel - y >= 14 else { continue }  // Labels closer than their height would overlap.
                lastLabel = y
                svg.line(plot.x, y, plot.x + plot.width, y, color: "#eee")
                svg.text(x: plot.x - 5, y: y + 4, tickLabel(tick), size: 10, anchor: "end")
            }
            for size in sizes {
                let x = plot.x + plot.width * xAxis.position(Double(size))
                svg.line(x, plot.y + plot.height, x, plot.y + plot.height + 4, color: "#888")
                svg.text(x: x, y: plot.y + plot.height + 16, shortCount(size), size: 10, anchor: "middle")
            }
            svg.text(
                x: plot.x + plot.width / 2, y: plot.y + plot.height + 32, "items in the keychain", size: 10,
                anchor: "middle", color: "#555")
            for (name, color, dashed, points) in series where !points.isEmpty {
                let placed = points.sorted { $0.0 < $1.0 }.map { size, figure in
                    (
                        x: plot.x + plot.width * xAxis.position(Double(size)),
                        y: { plot.y + plot.height * (1 - yAxis.position($0)) }, size: size, figure: figure
                    )
                }
                svg.polyline(placed.map { ($0.x, $0.y($0.figure.median)) }, color: color, dashed: dashed)
                for point in placed {
                    svg.line(point.x, point.y(point.figure.p10), point.x, point.y(point.figure.p90), color: color)
                    svg.circle(
                        point.x, point.y(point.figure.median), radius: 3, color: color,
                        tooltip:
                            "\(name), \(point.size.grouped) items: median \(formatDuration(point.figure.median)) (p10 \(formatDuration(point.figure.p10)), p90 \(formatDuration(point.figure.p90)))"
                    )
                }
            }
        }
        return svg.rendered
    }

    // MARK: Latchkey beside the peers

    static let peerOrder = [
        "Swift API in-process (embedded)", "Swift API in-process (agent)", "latchkey CLI (agent)",
        "latchkey CLI (embedded)",
        "process start (/bin/true)", "secret-tool", "keyring (Secret Service)", "pass", "keepassxc-cli",
        "keyring (cryptfile)",
        "keyring (alt plaintext file)",
    ]

    /// For find, add and delete: each tool's median as a bar on a logarithmic axis, Latchkey's in blue.
    static func peersChart(_ peers: RunSummary.Peers, run: RunSummary) -> String {
        let tools =
            (peerOrder.filter { peers.tools[$0] != nil } + peers.tools.keys.filter { !peerOrder.contains($0) }.sorted())
            .filter { peers.tools[$0]?["find"] != nil }
        let workloads = ["find", "add", "delete"]
        let rowHeight = 20.0
        let labelWidth = 230.0
        let barWidth = 500.0
        let panelHeight = 40 + rowHeight * Double(tools.count)
        let width = labelWidth + barWidth + 110
        let height = 70 + panelHeight * Double(workloads.count)
        var svg = SVG(width: width, height: height)
        svg.text(
            x: width / 2, y: 24, "Latchkey beside the tools people use on Linux (\(peers.size.grouped) items each)",
            size: 15, anchor: "middle", weight: "bold")
        svg.text(
            x: width / 2, y: 44, subtitle(run) + "; median per operation, logarithmic axis", size: 11,
            anchor: "middle", color: "#555")
        let values = tools.flatMap { tool in workloads.compactMap { peers.tools[tool]?[$0]?.median } }.filter { $0 > 0 }
        guard let low = values.min(), let high = values.max() else { return svg.rendered }
        let axis = LogAxis(low: low / 1.5, high: high * 1.5)
        for (panel, workload) in workloads.enumerated() {
            let top = 60 + Double(panel) * panelHeight
            svg.text(x: 10, y: top + 16, workload, size: 13, weight: "bold")
            let plot = Frame(x: labelWidth, y: top + 24, width: barWidth, height: rowHeight * Double(tools.count))
            for tick in axis.ticks() {
                let x = plot.x + plot.width * axis.position(tick)
                svg.line(x, plot.y, x, plot.y + plot.height, color: "#eee")
                svg.text(x: x, y: plot.y - 3, tickLabel(tick), size: 9, anchor: "middle", color: "#777")
            }
            for (row, tool) in tools.enumerated() {
                let y = plot.y + Double(row) * rowHeight
                svg.text(x: labelWidth - 8, y: y + 14, tool, size: 11, anchor: "end")
                guard let figure = peers.tools[tool]?[workload] else {
                    svg.text(x: plot.x + 4, y: y + 14, "not measured", size: 10, color: "#999")
                    continue
                }
                let color =
                    tool.hasPrefix("latchkey") || tool.hasPrefix("Swift API")
                    ? latchkeyColor
                    : tool.hasPrefix("process start") ? floorColor : peerColor
                let length = max(1, plot.width * axis.position(figure.median))
                svg.rect(
                    Frame(x: plot.x, y: y + 3, width: length, height: rowHeight - 6), fill: color,
                    tooltip:
                        "\(tool), \(workload): median \(formatDuration(figure.median)) (p10 \(formatDuration(figure.p10)), p90 \(formatDuration(figure.p90)))"
                )
                svg.text(x: plot.x + length + 4, y: y + 14, formatDuration(figure.median), size: 10)
            }
        }
        return svg.rendered
    }

    // MARK: Reliability

    static let outcomeColors = ["#2f8f4e", "#7cc191", "#b9e0c4", "#d8efe0"]

    /// One bar per trial: its events split by outcome, failures in red (each labelled, zero or not).
    static func reliabilityChart(_ figures: ReliabilityFigures) -> String {
        let rowHeight = 58.0
        let labelWidth = 290.0
        let barWidth = 520.0
        let source = wrapped(figures.source, columns: 120)
        let top = 50 + 14 * Double(source.count)
        let width = labelWidth + barWidth + 30
        let height = top + 24 + rowHeight * Double(figures.trials.count)
        var svg = SVG(width: width, height: height)
        svg.text(
            x: width / 2, y: 24, "Reliability suite: what each injected fault led to", size: 15, anchor: "middle",
            weight: "bold")
        for (index, line) in source.enumerated() {
            svg.text(x: width / 2, y: 44 + 14 * Double(index), line, size: 10, anchor: "middle", color: "#555")
        }
        for (row, trial) in figures.trials.enumerated() {
            let y = top + Double(row) * rowHeight
            let total = trial.outcomes.reduce(0) { $0 + $1.count }
            svg.text(x: labelWidth - 8, y: y + 15, trial.name, size: 12, anchor: "end", weight: "bold")
            svg.text(
                x: labelWidth - 8, y: y + 30, "\(total.grouped) \(trial.unit)", size: 10, anchor: "end", color: "#555")
            var x = labelWidth
            var shade = 0
            for outcome in trial.outcomes where outcome.count > 0 {
                let length = barWidth * Double(outcome.count) / Double(max(total, 1))
                let color = outcome.failure ? "#c0392b" : outcomeColors[min(shade, outcomeColors.count - 1)]
                if !outcome.failure { shade += 1 }
                svg.rect(
                    Frame(x: x, y: y + 4, width: length, height: 18), fill: color,
                    tooltip: "\(trial.name): \(outcome.label): \(outcome.count.grouped)")
                x += length
            }
            let caption = trial.outcomes.filter { !$0.failure }.map { "\($0.label) \($0.count.grouped)" }
                .joined(separator: " · ")
            svg.text(x: labelWidth, y: y + 36, caption, size: 10, color: "#333")
            let failures = trial.outcomes.filter(\.failure)
            if !failures.isEmpty {
                let failed = failures.reduce(0) { $0 + $1.count }
                svg.text(
                    x: labelWidth, y: y + 50, failures.map(\.label).joined(separator: ", ") + ": \(failed.grouped)",
                    size: 10, color: failed == 0 ? "#2f8f4e" : "#c0392b", weight: "bold")
            }
        }
        return svg.rendered
    }

    // MARK: Pieces

    static func subtitle(_ run: RunSummary) -> String {
        (run.revision.map { "commit \($0) · " } ?? "") + run.machine
    }

    static func legend(_ svg: inout SVG, x: Double, y: Double, _ entries: [(String, String, Bool)]) {
        var offset = x
        for (name, color, dashed) in entries {
            svg.polyline([(offset, y), (offset + 26, y)], color: color, dashed: dashed)
            svg.circle(offset + 13, y, radius: 3, color: color, tooltip: nil)
            svg.text(x: offset + 32, y: y + 4, name, size: 11)
            offset += 110
        }
    }

    /// `text` in lines of at most `columns` characters, broken at spaces (a longer word gets a line of its own).
    static func wrapped(_ text: String, columns: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            if !line.isEmpty && line.count + 1 + word.count > columns {
                lines.append(line)
                line = String(word)
            } else {
                line += (line.isEmpty ? "" : " ") + word
            }
        }
        return lines + [line]
    }

    /// A tick's duration, short: "500 ns", "2 µs", "1.5 ms", "3 s".
    static func tickLabel(_ nanoseconds: Double) -> String {
        let (value, unit): (Double, String) =
            nanoseconds < 1_000
            ? (nanoseconds, "ns")
            : nanoseconds < 1_000_000
                ? (nanoseconds / 1_000, "µs")
                : nanoseconds < 1_000_000_000 ? (nanoseconds / 1_000_000, "ms") : (nanoseconds / 1_000_000_000, "s")
        let rounded = (value * 10).rounded() / 10
        return (rounded == rounded.rounded() ? String(Int(rounded)) : String(format: "%.1f", rounded)) + " " + unit
    }

    /// 1000 as "1k", 1000000 as "1M".
    static func shortCount(_ count: Int) -> String {
        if count >= 1_000_000 && count % 1_000_000 == 0 { return "\(count / 1_000_000)M" }
        if count >= 1_000 && count % 1_000 == 0 { return "\(count / 1_000)k" }
        return "\(count)"
    }
}

extension Int {
    /// 1234567 as "1,234,567" in every locale: a chart reads the same wherever it is drawn.
    var grouped: String { formatted(.number.locale(Locale(identifier: "en_US"))) }
}

/// A rectangle on the page.
struct Frame {
    var x: Double
    var y: Double
    var width: Double
    var height: Double
}

/// A logarithmic axis from `low` to `high` (both positive).
struct LogAxis {
    let low: Double
    let high: Double

    /// Where `value` falls, 0 at `low` and 1 at `high`.
    func position(_ value: Double) -> Double {
        guard value > 0, high > low else { return 0 }
        return (log10(value) - log10(low)) / (log10(high) - log10(low))
    }

    /// 1, 2 and 5 times the powers of ten inside the axis; only the powers of ten when that gives more
    /// than six.
    func ticks() -> [Double] {
        func within(_ steps: [Double]) -> [Double] {
            var ticks: [Double] = []
            var decade = pow(10, floor(log10(low)))
            while decade <= high {
                for step in steps where decade * step >= low && decade * step <= high { ticks.append(decade * step) }
                decade *= 10
            }
            return ticks
        }
        let ticks = within([1, 2, 5])
        if ticks.count > 6 { return ticks.filter { abs(log10($0).rounded() - log10($0)) < 1e-9 } }
        return ticks.count < 3 ? within([1, 2, 3, 4, 5, 6, 7, 8, 9]) : ticks
    }
}

/// An SVG document built element by element; text is escaped.
struct SVG {
    let width: Double
    let height: Double
    private var body: [String] = []

    init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    static func number(_ value: Double) -> String { String(format: "%.1f", value) }

    mutating func text(
        x: Double, y: Double, _ text: String, size: Double, anchor: String = "start", color: String = "#222",
        weight: String = "normal"
    ) {
        body.append(
            "<text x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" font-size=\"\(Self.number(size))\" text-anchor=\"\(anchor)\" fill=\"\(color)\" font-weight=\"\(weight)\">\(Self.escape(text))</text>"
        )
    }

    mutating func line(_ x1: Double, _ y1: Double, _ x2: Double, _ y2: Double, color: String) {
        body.append(
            "<line x1=\"\(Self.number(x1))\" y1=\"\(Self.number(y1))\" x2=\"\(Self.number(x2))\" y2=\"\(Self.number(y2))\" stroke=\"\(color)\" stroke-width=\"1\"/>"
        )
    }

    mutating func polyline(_ points: [(Double, Double)], color: String, dashed: Bool) {
        let list = points.map { "\(Self.number($0.0)),\(Self.number($0.1))" }.joined(separator: " ")
        body.append(
            "<polyline points=\"\(list)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"\(dashed ? " stroke-dasharray=\"5,4\"" : "")/>"
        )
    }

    mutating func circle(_ x: Double, _ y: Double, radius: Double, color: String, tooltip: String?) {
        let title = tooltip.map { "<title>\(Self.escape($0))</title>" } ?? ""
        body.append(
            "<circle cx=\"\(Self.number(x))\" cy=\"\(Self.number(y))\" r=\"\(Self.number(radius))\" fill=\"\(color)\">\(title)</circle>"
        )
    }

    mutating func rect(_ frame: Frame, fill: String = "none", stroke: String? = nil, tooltip: String? = nil) {
        let title = tooltip.map { "<title>\(Self.escape($0))</title>" } ?? ""
        body.append(
            "<rect x=\"\(Self.number(frame.x))\" y=\"\(Self.number(frame.y))\" width=\"\(Self.number(frame.width))\" height=\"\(Self.number(frame.height))\" fill=\"\(fill)\"\(stroke.map { " stroke=\"\($0)\"" } ?? "")>\(title)</rect>"
        )
    }

    var rendered: String {
        let header =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Self.number(width))\" height=\"\(Self.number(height))\" viewBox=\"0 0 \(Self.number(width)) \(Self.number(height))\" \(Charts.font)>"
        let background =
            "<rect x=\"0\" y=\"0\" width=\"\(Self.number(width))\" height=\"\(Self.number(height))\" fill=\"#ffffff\"/>"
        return ([header, background] + body + ["</svg>"]).joined(separator: "\n") + "\n"
    }
}
