import Foundation
import LatchkeyTestSupport
import Testing

/// `latchkey-bench --pki` runs every key and certificate workload and prints its table (the figures
/// themselves are proven by the benchmark, never by a test).
@Suite(.dedicatedThreads) struct BenchPKITests {
    @Test func thePKIRunMeasuresEveryOperationBesideItsFloor() throws {
        let output = try HelperProcess.run(HelperProcess.product("latchkey-bench"), ["--pki", "--samples", "5"])
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "## Keys and certificates (in process)")
        #expect(lines.contains("`latchkey-bench --pki --samples 5`"))
        let rows = lines.filter { $0.hasPrefix("| ") && !$0.hasPrefix("| operation") }
        #expect(rows.map { $0.split(separator: "|")[0].trimmingCharacters(in: .whitespaces) } == [
            "P-256 sign", "P-256 verify", "RSA-2048 sign", "ECIES P-256 encrypt", "ECIES P-256 decrypt", "certificate decode",
            "certificate add", "identity lookup",
        ])
        // The four with a floor end with a ratio; the others say there is none.
        #expect(rows.prefix(4).allSatisfy { $0.hasSuffix("× |") })
        #expect(rows.suffix(4).allSatisfy { $0.hasSuffix("| – | – |") })
    }
}
