import Foundation
import LatchkeyTestSupport
import Testing

/// `latchkey-bench --sync-paths` starts its own PostgreSQL, session bus and latchkeyd, sends a change by each
/// road and prints one row per road (the figures are the benchmark's, never a test's), leaving no server
/// behind.
@Suite(.dedicatedThreads) struct BenchSyncPathsTests {
    @Test func everyRoadIsMeasured() throws {
        let output = try HelperProcess.run(
            HelperProcess.product("latchkey-bench"), ["--sync-paths", "--samples", "2"], timeout: 120)
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.first
                == "Change to visible on another device, by the road the change took on the first: latchkey-bench --sync-paths --samples 2"
        )
        let rows = lines.filter { $0.hasPrefix("| ") && !$0.hasPrefix("| Road") }
        #expect(
            rows.map { $0.split(separator: "|")[0].trimmingCharacters(in: .whitespaces) } == [
                "the agent's socket (`AgentKeychainService.add`)",
                "the Secret Service (`CreateItem` over D-Bus)",
                "around the agent (the file written by another process; the Secret Service's road before issue 52)",
            ])
        for row in rows {
            #expect(
                row.range(of: #"\| [0-9.]+ ms \| [0-9.]+ ms \| [0-9.]+× \|$"#, options: .regularExpression) != nil,
                "\(row)")
        }
        #expect(rows.first?.hasSuffix("| 1.00× |") == true)
    }
}
