import Foundation

/// How soon latchkeyd wipes its keys after the login session locks (`--session-lock`, and part of `--peers`),
/// measured by `bench/session-lock.py`: a private bus stands in for the system bus and Tests/Tools/fake-logind.py
/// for logind; each sample runs from the call that makes it emit the session's `Lock` signal to latchkeyd's
/// "locked" line. Issue 33's goal: keys wiped within 100 ms. GNOME Keyring, the peer measured beside it
/// elsewhere, does not lock when the session locks: its row says so.
struct SessionLockWorkload {
    let samples: Int
    let binDirectory: String
    let script: String
    let fakeLogind: String
    let python: String

    private struct Output: Decodable {
        let lock: [Double]
    }

    func run() throws -> Samples {
        let data = try driverOutput(
            python: python, script: script,
            ["--bin", binDirectory, "--fake-logind", fakeLogind, "--samples", "\(samples)"])
        return Samples(try JSONDecoder().decode(Output.self, from: data).lock)
    }

    /// The report's section.
    static func render(_ lock: Samples, command: String) -> String {
        let median = lock.median
        let p99 = lock.percentile(0.99)
        let maximum = lock.percentile(1)
        return [
            "### Locked with the session: logind's Lock signal to the keys wiped", "",
            "`\(command)`; \(lock.nanoseconds.count) samples, each from the call that makes a stand-in logind emit the "
                + "session's `Lock` signal to latchkeyd's \"locked\" log line (written once the keys are wiped), on a private "
                + "system bus.", "",
            "| provider | median | p99 | max | goal (within 100 ms) |",
            "|---|---|---|---|---|",
            "| Latchkey (latchkeyd) | \(formatDuration(median)) | \(formatDuration(p99)) | \(formatDuration(maximum)) | "
                + "\(maximum < 100e6 ? "met (max)" : p99 < 100e6 ? "met at p99, not at max" : "not met") |",
            "| GNOME Keyring | – | – | – | does not lock when the session locks |",
        ].joined(separator: "\n") + "\n"
    }
}
