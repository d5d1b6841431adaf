import Foundation
import LatchkeyTestSupport
import Testing

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `latchkey-bench --plot DIR --from FILE`: SVG charts from a run's figures, and the committed charts
/// are exactly what the committed run draws.
@Suite(.dedicatedThreads) struct BenchChartTests {
    let directory = TemporaryDirectory()
    var bench: String { HelperProcess.product("latchkey-bench") }
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    static let run = """
        {"command": "latchkey-bench --sizes 1000,100000", "machine": "test machine", "revision": "abc1234",
         "sizes": [
          {"size": 1000, "latchkey": {"findData": {"median": 20000, "p10": 18000, "p90": 25000}},
                         "floor": {"findData": {"median": 8000, "p10": 7000, "p90": 9000}}},
          {"size": 100000, "latchkey": {"findData": {"median": 30000, "p10": 28000, "p90": 35000}},
                           "floor": {"findData": {"median": 12000, "p10": 11000, "p90": 13000}}}],
         "peers": {"size": 1000, "tools": {
          "latchkey CLI (agent)": {"find": {"median": 4000000, "p10": 3900000, "p90": 4200000}},
          "secret-tool": {"find": {"median": 12000000, "p10": 11000000, "p90": 13000000},
                          "add": {"median": 15000000, "p10": 14000000, "p90": 16000000}}}}}
        """
    static let reliability = """
        {"source": "a test's counts", "trials": [{"name": "Crash & <kill>", "unit": "kills", "outcomes": [
          {"label": "committed", "count": 2110, "failure": false}, {"label": "lost", "count": 0, "failure": true}]}]}
        """

    /// Every `<title>` (tooltip) and `<text>` of an SVG, after checking that it parses as XML.
    func texts(_ path: String) throws -> [String] {
        final class Collector: NSObject, XMLParserDelegate {
            var texts: [String] = []
            var current: String?
            func parser(
                _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]
            ) {
                if name == "text" || name == "title" { current = "" }
            }
            func parser(_ parser: XMLParser, foundCharacters string: String) { current? += string }
            func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?)
            {
                if let text = current { texts.append(text) }
                current = nil
            }
        }
        let parser = XMLParser(data: try Data(contentsOf: URL(fileURLWithPath: path)))
        let collector = Collector()
        parser.delegate = collector
        #expect(parser.parse(), "\(path) is not well-formed: \(String(describing: parser.parserError))")
        return collector.texts
    }

    @Test func chartsShowEveryFigureOfTheRun() throws {
        try Self.run.write(toFile: directory.file("run.json"), atomically: true, encoding: .utf8)
        try Self.reliability.write(toFile: directory.file("reliability.json"), atomically: true, encoding: .utf8)
        let charts = directory.file("charts")
        let output = try HelperProcess.run(
            bench,
            [
                "--plot", charts, "--from", directory.file("run.json"),
                "--reliability", directory.file("reliability.json"),
            ])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(
            output.stderr
                == ["latency-by-size.svg", "peers.svg", "reliability.svg"]
                .map { "latchkey-bench: wrote \(charts)/\($0)\n" }.joined())
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: charts).sorted()
                == ["latency-by-size.svg", "peers.svg", "reliability.svg"])

        let latency = try texts(charts + "/latency-by-size.svg")
        #expect(latency.contains("commit abc1234 · test machine"))
        #expect(latency.contains("Latchkey, 1,000 items: median 20.0 µs (p10 18.0 µs, p90 25.0 µs)"))
        #expect(latency.contains("Latchkey, 100,000 items: median 30.0 µs (p10 28.0 µs, p90 35.0 µs)"))
        #expect(latency.contains("floor, 100,000 items: median 12.0 µs (p10 11.0 µs, p90 13.0 µs)"))
        #expect(latency.contains("1k") && latency.contains("100k"))

        let peers = try texts(charts + "/peers.svg")
        #expect(peers.contains("latchkey CLI (agent), find: median 4.00 ms (p10 3.90 ms, p90 4.20 ms)"))
        #expect(peers.contains("secret-tool, add: median 15.00 ms (p10 14.00 ms, p90 16.00 ms)"))
        #expect(peers.filter { $0 == "not measured" }.count == 3, "the CLI's add and delete, and secret-tool's delete")

        let reliability = try texts(charts + "/reliability.svg")
        #expect(reliability.contains("Crash & <kill>"), "text is escaped, and reads back as written")
        #expect(reliability.contains("2,110 kills"))
        #expect(reliability.contains("Crash & <kill>: committed: 2,110"))
        #expect(reliability.contains("lost: 0"))
    }

    @Test func aLongSourceIsWrappedAtSpaces() throws {
        let source = String(repeating: "word ", count: 30) + "end"
        let lines = try run(reliabilitySource: source)
        #expect(lines.filter { $0.hasPrefix("word") }.count == 2, "\(lines)")
        #expect(
            lines.contains(String(repeating: "word ", count: 23) + "word"),
            "120 characters at most: 23 words and a last one")
        #expect(lines.contains(String(repeating: "word ", count: 6) + "end"))
    }

    /// The text of a reliability chart drawn for one trial with `reliabilitySource` as its source.
    func run(reliabilitySource: String) throws -> [String] {
        try Self.run.write(toFile: directory.file("run.json"), atomically: true, encoding: .utf8)
        let figures = Self.reliability.replacingOccurrences(of: "a test's counts", with: reliabilitySource)
        try figures.write(toFile: directory.file("reliability.json"), atomically: true, encoding: .utf8)
        let charts = directory.file("wrapped")
        let output = try HelperProcess.run(
            bench,
            [
                "--plot", charts, "--from", directory.file("run.json"),
                "--reliability", directory.file("reliability.json"),
            ])
        #expect(output.status == 0, "\(output.stderr)")
        return try texts(charts + "/reliability.svg")
    }

    @Test func badInputIsRefusedWithTheReason() throws {
        let missing = try HelperProcess.run(
            bench, ["--plot", directory.file("charts"), "--from", directory.file("none.json")])
        #expect(missing.status == 64)
        #expect(missing.stderr.hasPrefix("latchkey-bench: cannot read the run in \(directory.file("none.json")): "))
        let noPlot = try HelperProcess.run(bench, ["--from", directory.file("none.json")])
        #expect(noPlot.status == 64)
        #expect(noPlot.stderr == "latchkey-bench: --from needs --plot DIR\n")
        try "{\"command\": 1}".write(toFile: directory.file("bad.json"), atomically: true, encoding: .utf8)
        let bad = try HelperProcess.run(
            bench, ["--plot", directory.file("charts"), "--from", directory.file("bad.json")])
        #expect(bad.status == 64)
        #expect(!FileManager.default.fileExists(atPath: directory.file("charts")), "nothing drawn from a bad run")
    }

    @Test func theCommittedChartsAreWhatTheCommittedRunDraws() throws {
        let docs = Self.root + "/docs/bench"
        let charts = directory.file("charts")
        let output = try HelperProcess.run(
            bench,
            [
                "--plot", charts, "--from", docs + "/run.json",
                "--reliability", docs + "/reliability.json",
            ])
        #expect(output.status == 0, "\(output.stderr)")
        for name in ["latency-by-size.svg", "peers.svg", "reliability.svg"] {
            let drawn = try Data(contentsOf: URL(fileURLWithPath: charts + "/" + name))
            let committed = try Data(contentsOf: URL(fileURLWithPath: docs + "/" + name))
            #expect(
                drawn == committed,
                "docs/bench/\(name) is stale: regenerate it with `swift run latchkey-bench --plot docs/bench --from docs/bench/run.json`"
            )
        }
    }
}
