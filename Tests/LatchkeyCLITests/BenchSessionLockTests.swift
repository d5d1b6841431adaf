import Foundation
import LatchkeyTestSupport
import Testing

/// `latchkey-bench --session-lock` runs bench/session-lock.py (a stand-in logind on a private bus) and prints
/// its table beside the 100 ms goal, with GNOME Keyring's row saying it has no such lock (the figures are the
/// benchmark's, never a test's).
@Suite(
    .dedicatedThreads,
    .enabled(
        if: BenchDrivers.sessionLockAvailable, "needs dbus-daemon and Debian's python3 with python3-dbus and python3-gi"
    ))
struct BenchSessionLockTests {

    @Test func theRunPrintsLatchkeysFigureBesideTheGoal() throws {
        let output = try HelperProcess.run(
            HelperProcess.product("latchkey-bench"), ["--session-lock", "--samples", "3"],
            currentDirectory: BenchDrivers.root)
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.first == "### Locked with the session: logind's Lock signal to the keys wiped")
        #expect(
            lines.contains {
                $0.hasPrefix("`latchkey-bench --session-lock --samples 3`; 3 samples, each from the call")
            }, "\(output.stdout)")
        let rows = lines.filter { $0.hasPrefix("| ") }
        #expect(rows.count == 3, "\(output.stdout)")
        #expect(rows.first == "| provider | median | p99 | max | goal (within 100 ms) |")
        #expect(rows.dropFirst().first?.hasPrefix("| Latchkey (latchkeyd) | ") == true, "\(output.stdout)")
        #expect(rows.last == "| GNOME Keyring | – | – | – | does not lock when the session locks |")
        #expect(output.stderr == "latchkey-bench: logind's Lock signal to the keys wiped...\n")
    }

    @Test func aMissingDriverFailsTheRun() throws {
        let output = try HelperProcess.run(
            HelperProcess.product("latchkey-bench"),
            ["--session-lock", "--samples", "3", "--session-lock-script", "/nonexistent/session-lock.py"],
            currentDirectory: BenchDrivers.root)
        #expect(output.status == 64)
        #expect(output.stdout == "")
        #expect(
            output.stderr == "latchkey-bench: logind's Lock signal to the keys wiped...\n"
                + "latchkey-bench: needs /usr/bin/python3 and /nonexistent/session-lock.py: run it from the repository after script/install-peers\n"
        )
    }
}

/// What the drivers in bench/ need, and where they are (latchkey-bench finds them from the repository's root).
enum BenchDrivers {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// dbus-daemon, and Debian's python3 with python3-dbus and python3-gi (fake-logind.py's).
    static var sessionLockAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/dbus-daemon")
            // No interpreter: not available.
            && (try? HelperProcess.run("/usr/bin/python3", ["-c", "import dbus, gi"]))?.status == 0
    }
}
