import Foundation
import LatchkeyTestSupport
import Testing

/// Typed in a terminal, the suite finishes: no program a test spawns reaches the terminal of the person
/// running it (see `ChildProcess`). A slice of the suite — the suites that spawn `latchkey` (one asks a
/// yes-or-no question on /dev/tty when it can), `latchkeyd` and the sync commands — runs again on a
/// pseudo-terminal, in a background process group as `swift test` puts the test bundle: a child that read
/// the terminal there would be stopped (SIGTTIN) with the whole group.
/// Set in the slice's environment, so the slice never runs this suite again.
private let nestedRun = "LATCHKEY_TESTS_UNDER_TERMINAL"

@Suite(
    .dedicatedThreads,
    .enabled(if: ProcessInfo.processInfo.environment[nestedRun] == nil, "the slice itself runs without this suite"))
struct TerminalIsolationTests {
    static let slice = [
        "CLIHardeningTests", "DoctorAndDumpTests", "BackupCommandTests", "SyncCommandTests", "AgentLifecycleTests",
    ]

    @Test func aSliceOfTheSuiteRunOnATerminalFinishes() throws {
        // The running test bundle itself (on Linux an executable), as SwiftPM runs it for Swift Testing:
        // the bundle directly, so no second `swift test` contends for the build directory's lock.
        let bundle = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var environment = ProcessInfo.processInfo.environment
        environment[nestedRun] = "1"
        // bash with job control (set -m) starts the bundle as a background job, in a process group of its own
        // that is not the terminal's foreground group, and `wait` returns as soon as the job stops or ends.
        let session = try PseudoTerminalSession(
            executable: "/bin/bash",
            arguments: [
                "-c", #"set -m; "$@" & wait "$!"; echo "bundle exit status $?""#, "bash", bundle, "--testing-library",
                "swift-testing",
            ]
                + Self.slice.flatMap { ["--filter", $0] },
            environment: environment)
        let status = session.wait(timeout: 600)
        let transcript = session.transcript
        #expect(status == 0)
        #expect(transcript.contains("bundle exit status 0"), "\(transcript.suffix(3_000))")
        #expect(transcript.contains(" suites passed after "), "\(transcript.suffix(3_000))")
        for suite in Self.slice { #expect(transcript.contains("Suite \(suite) passed"), "\(suite)") }
    }
}
