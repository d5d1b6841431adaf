import Foundation
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `latchkey-bench --login` (as root) runs bench/login.py — a throwaway user and PAM service per provider,
/// pamtester, then `secret-tool lookup` — and prints Latchkey's row beside GNOME Keyring's; whether it ends well
/// or not, it leaves no user, PAM service file or runtime directory behind (the figures are the benchmark's,
/// never a test's).
@Suite(
    .serialized, .dedicatedThreads,
    .enabled(
        if: BenchDrivers.loginAvailable,
        "needs root, pamtester, pam_gnome_keyring.so, gnome-keyring, secret-tool, systemd-socket-activate and cc"))
struct BenchLoginTests {
    /// What a run could leave behind: its users, PAM service files and per-user directories.
    static func leftovers() throws -> [String] {
        let users = try String(contentsOfFile: "/etc/passwd", encoding: .utf8).split(separator: "\n")
            .filter { $0.hasPrefix("lkbench") }.map { "user " + $0.prefix { $0 != ":" } }
        let services = try FileManager.default.contentsOfDirectory(atPath: "/etc/pam.d").filter {
            $0.hasPrefix("latchkey-bench-")
        }
        let directories = try FileManager.default.contentsOfDirectory(atPath: "/tmp")
            .filter { $0.hasPrefix("lkbench") || $0.hasPrefix("latchkey-bench-login-") }
        return users + services + directories
    }

    @Test func theRunPrintsBothProvidersAndLeavesNothingBehind() throws {
        let output = try HelperProcess.run(
            HelperProcess.product("latchkey-bench"), ["--login", "--samples", "2"], timeout: 300,
            currentDirectory: BenchDrivers.root)
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.first
                == "### Login to the first secret: the PAM session step to the first `secret-tool lookup` answered")
        #expect(
            lines.contains {
                $0.hasPrefix("`latchkey-bench --login --samples 2`; pamtester `authenticate open_session`")
            })
        let rows = lines.filter { $0.hasPrefix("| ") && !$0.hasPrefix("| provider") }
        #expect(
            rows.map { $0.split(separator: "|")[0].trimmingCharacters(in: .whitespaces) }
                == ["Latchkey (pam_latchkey)", "GNOME Keyring (pam_gnome_keyring)"], "\(output.stdout)")
        #expect(
            lines.contains {
                $0.hasPrefix("Latchkey's login to the first secret is ")
                    && $0.contains("× GNOME Keyring's, the whole login ")
                    && $0.hasSuffix("× (medians, 2 samples each).")
            })
        // Both measured logins took the early derivation's road (the agent said so).
        #expect(
            lines.contains(
                "Latchkey: measured logins whose session step unlocked with the key derived at the auth step: 2."),
            "\(output.stdout)")
        #expect(
            lines.contains {
                $0.hasPrefix("GNOME Keyring: the login keyring's key derivation, iterations of SHA-256: ")
            })
        #expect(try Self.leftovers() == [])
    }

    @Test func aRunThatFailsStillRemovesItsUsersAndServices() throws {
        // The module cannot be built: the driver fails after adding Latchkey's user, and takes it away.
        let output = try HelperProcess.run(
            HelperProcess.product("latchkey-bench"), ["--login", "--samples", "2", "--build-pam", "/bin/false"],
            timeout: 300, currentDirectory: BenchDrivers.root)
        #expect(output.status == 64)
        #expect(output.stdout == "")
        #expect(output.stderr.hasSuffix("latchkey-bench: bench/login.py failed (exit status 1)\n"), "\(output.stderr)")
        #expect(try Self.leftovers() == [])
    }
}

extension BenchDrivers {
    /// Root, and what bench/login.py runs.
    static var loginAvailable: Bool {
        geteuid() == 0
            && [
                "/usr/bin/pamtester", "/usr/bin/gnome-keyring-daemon", "/usr/bin/secret-tool",
                "/usr/bin/systemd-socket-activate",
                "/usr/bin/dbus-daemon", "/usr/bin/cc", "/usr/bin/stdbuf", "/usr/bin/setpriv", "/usr/sbin/useradd",
            ]
            .allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
            && FileManager.default.fileExists(atPath: "/lib/x86_64-linux-gnu/security/pam_gnome_keyring.so")
    }
}
