import Foundation
import LatchkeyTestSupport
import Testing

/// `latchkey-bench --pki` runs every key and certificate workload and prints its table (the figures
/// themselves are proven by the benchmark, never by a test).
@Suite(.dedicatedThreads) struct BenchPKITests {
    @Test func thePKIRunMeasuresEveryOperationBesideItsFloor() throws {
        let output = try HelperProcess.run(HelperProcess.product("latchkey-bench"), ["--pki", "--samples", "10"])
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "## Keys and certificates (in process)")
        #expect(lines.contains("`latchkey-bench --pki --samples 10`"))
        let tables = output.stdout.components(separatedBy: "## Keys and certificates through the agent")
        #expect(tables.count == 2, "\(output.stdout)")
        func rows(_ table: String) -> [String] {
            table.split(separator: "\n").map(String.init).filter { $0.hasPrefix("| ") && !$0.hasPrefix("| operation") }
        }
        func names(_ rows: [String]) -> [String] {
            rows.map { $0.split(separator: "|")[0].trimmingCharacters(in: .whitespaces) }
        }
        let inProcess = rows(tables[0])
        #expect(
            names(inProcess) == [
                "P-256 sign", "P-256 verify", "RSA-2048 sign", "ECIES P-256 encrypt", "ECIES P-256 decrypt",
                "certificate decode",
                "certificate add", "identity lookup",
            ])
        // The six with a floor end with a ratio; the others say there is none.
        #expect(inProcess.prefix(6).allSatisfy { $0.hasSuffix("× |") })
        #expect(inProcess.suffix(2).allSatisfy { $0.hasSuffix("| – | – |") })
        // Through a latchkeyd the run starts and stops: each operation beside the same one in process, and
        // the verdict against the 60 µs goal.
        let agent = rows(tables.last ?? "")
        #expect(
            names(agent) == [
                "agent round trip (status)", "password lookup (one item's data)",
                "the same lookup's request replayed on the warm connection (floor)", "held P-256 sign",
                "held RSA-2048 sign", "held ECIES P-256 decrypt", "certificate add", "identity lookup",
            ])
        #expect(
            agent.allSatisfy {
                $0.hasSuffix("| yes |") || $0.hasSuffix("| no |") || $0.hasSuffix("| not resolved |")
                    || $0.hasSuffix("| – |")
            })
        // Each difference comes with the interval of its ten block pairs, which holds the median.
        for row in agent {
            let cell = row.split(separator: "|")[4].trimmingCharacters(in: .whitespaces)
            #expect(cell.contains(" (") && cell.contains(" … ") && cell.hasSuffix(")"), "\(row)")
        }
        // The status trip and the password lookup are not judged by the 60 µs goal; the lookup is judged by
        // issue 16's (within 2× of in process), in a sentence of its own.
        #expect(agent.prefix(3).allSatisfy { $0.hasSuffix("| – |") })
        let goal = lines.filter {
            $0.hasPrefix("Goal (issue 16): a password's lookup through the agent within 2× of in process: ")
        }
        #expect(goal.count == 1 && (goal[0].hasSuffix("— met.") || goal[0].hasSuffix("— **not met**.")), "\(goal)")
        // Issue 56's floor of that path, in the same run: the request's bytes replayed.
        let floor = lines.filter {
            $0.hasPrefix(
                "The floor of that path (issue 56): the same request's bytes replayed on the warm connection — ")
        }
        #expect(floor.count == 1 && floor[0].contains("× in process); the Swift API adds "), "\(floor)")
    }
}
