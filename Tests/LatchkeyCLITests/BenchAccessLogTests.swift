import Foundation
import LatchkeyTestSupport
import Testing

/// `latchkey-bench --access-log` measures a find through latchkeyd with the access log on and off and the
/// log's growth, and prints its table (the figures themselves are the benchmark's, never a test's).
@Suite(.dedicatedThreads) struct BenchAccessLogTests {
    @Test func theRunMeasuresAFindWithAndWithoutTheLog() throws {
        let output = try HelperProcess.run(
            HelperProcess.product("latchkey-bench"), ["--access-log", "--samples", "10"])
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "## The access log's cost (issue 53)")
        #expect(lines.contains("| find through the agent | median | p99 |"))
        #expect(lines.filter { $0.hasPrefix("| access log on | ") || $0.hasPrefix("| access log off | ") }.count == 2)
        #expect(lines.last?.contains(" MiB per 100,000 accesses — but it keeps only the newest 50000 entries") == true)
    }
}
