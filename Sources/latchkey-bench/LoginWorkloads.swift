import Foundation
import Latchkey

/// Login to the first secret (`--login`, and part of `--peers`): the PAM session step to the first
/// `secret-tool lookup` answered, pam_latchkey + latchkeyd beside pam_gnome_keyring + GNOME Keyring, measured
/// by `bench/login.py` as root with pamtester, a throwaway user per provider and a PAM service file it writes
/// and removes; the user's session bus is a private one whose only service directory is the run's own
/// (bench/login.py's docstring says what stands in for the systemd user manager). Issue 33's figure.
struct LoginWorkloads {
    let samples: Int
    let binDirectory: String
    let script: String
    let buildPAM: String
    let python: String

    struct Result {
        let provider: String
        /// pam_open_session's start to the secret printed by secret-tool.
        let login: Samples
        /// pam_open_session alone.
        let session: Samples
        /// pam_authenticate (pam_unix, and the module keeping the password), before the clock of `login`.
        let authenticate: Samples
        /// The whole login: pam_authenticate's start to the secret printed (each sample's `authenticate` and
        /// `login` added) — what a person waits for, wherever a provider does its work.
        var whole: Samples { Samples(zip(authenticate.nanoseconds, login.nanoseconds).map { $0 + $1 }) }
    }

    func run() throws -> (results: [Result], notes: [String: Double]) {
        let data = try driverOutput(
            python: python, script: script,
            ["--bin", binDirectory, "--build-pam", buildPAM, "--samples", "\(samples)"])
        let decoded = try JSONDecoder().decode(ProviderDriverOutput.self, from: data)
        let results = decoded.results.sorted { $0.key > $1.key }.map { provider, figures in
            Result(
                provider: provider, login: Samples(figures["login"] ?? []), session: Samples(figures["session"] ?? []),
                authenticate: Samples(figures["authenticate"] ?? []))
        }
        var notes = decoded.notes
        notes[
            "Latchkey: unlocking a keychain in process (Argon2id, 64 MiB, 3 passes: what latchkeyd does inside the session step), median ms"
        ] =
            try Self.unlockMilliseconds()
        return (results, notes)
    }

    /// The default key derivation's share of Latchkey's session step: a keychain with the default parameters (as
    /// pam_latchkey's `create` makes it) unlocked in this process, median of 9.
    static func unlockMilliseconds() throws -> Double {
        let directory =
            NSTemporaryDirectory() + "latchkey-bench-login-unlock-\(ProcessInfo.processInfo.processIdentifier)"
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: directory) }  // Scratch files; a leftover only costs disk.
        let passphrase = Passphrase("benchmark login password")
        var keychain = try KeychainDatabase.create(at: directory + "/login.keychain", passphrase: passphrase)
        var unlock = Samples()
        for _ in 0..<9 {
            keychain = KeychainDatabase.inMemory()  // Releases (closes) the previous handle first.
            keychain = try KeychainDatabase.open(at: directory + "/login.keychain")
            unlock.nanoseconds.append(try time { try keychain.unlock(with: passphrase) })
        }
        return unlock.median / 1e6
    }

    /// The section of a `--peers` run without root: nothing measured, and why.
    static let notRoot =
        "### Login to the first secret: not measured\n\nIt needs root (a throwaway user, a PAM service file in "
        + "/etc/pam.d): run `latchkey-bench --login` as root.\n"

    /// The report's section.
    static func render(_ run: (results: [Result], notes: [String: Double]), command: String) -> String {
        let results = run.results
        var lines = [
            "### Login to the first secret: the PAM session step to the first `secret-tool lookup` answered", "",
            "`\(command)`; pamtester `authenticate open_session` for a throwaway user, then `secret-tool lookup` as the user "
                + "on the session's private bus; the clock starts after pam_authenticate (pam_unix) returns and stops when "
                + "the secret is printed. The provider starts cold: latchkeyd by its socket at the session step, "
                + "gnome-keyring-daemon by pam_gnome_keyring.", "",
            "| provider | login to first secret, median | p99 | session step alone, median | authenticate, median | whole login, median |",
            "|---|---|---|---|---|---|",
        ]
        for result in results {
            lines.append(
                "| \(result.provider) | \(formatDuration(result.login.median)) | \(formatDuration(result.login.percentile(0.99))) | "
                    + "\(formatDuration(result.session.median)) | \(formatDuration(result.authenticate.median)) | "
                    + "\(formatDuration(result.whole.median)) |")
        }
        if let latchkey = results.first(where: { $0.provider.hasPrefix("Latchkey") }),
            let gnome = results.first(where: { $0.provider.hasPrefix("GNOME") })
        {
            lines += [
                "",
                "Latchkey's login to the first secret is \(String(format: "%.2f", latchkey.login.median / gnome.login.median))× "
                    + "GNOME Keyring's, the whole login \(String(format: "%.2f", latchkey.whole.median / gnome.whole.median))× "
                    + "(medians, \(latchkey.login.nanoseconds.count) samples each).",
            ]
        }
        for (name, value) in run.notes.sorted(by: { $0.key < $1.key }) {
            if name.hasSuffix(", median ms") {
                lines.append("\(name.dropLast(3)): \(String(format: "%.1f", value)) ms.")
            } else if name.hasSuffix(", seconds") {
                lines.append("\(name.dropLast(9)): \(String(format: "%.2f", value)) s.")
            } else {
                lines.append("\(name): \(Int(value)).")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
