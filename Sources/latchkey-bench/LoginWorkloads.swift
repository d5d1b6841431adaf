import Foundation

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
    }

    private struct Output: Decodable {
        let results: [String: [String: [Double]]]
    }

    func run() throws -> [Result] {
        let data = try driverOutput(python: python, script: script,
                                    ["--bin", binDirectory, "--build-pam", buildPAM, "--samples", "\(samples)"])
        return try JSONDecoder().decode(Output.self, from: data).results.sorted { $0.key > $1.key }.map { provider, figures in
            Result(provider: provider, login: Samples(figures["login"] ?? []), session: Samples(figures["session"] ?? []),
                   authenticate: Samples(figures["authenticate"] ?? []))
        }
    }

    /// The report's section.
    static func render(_ results: [Result], command: String) -> String {
        var lines = ["### Login to the first secret: the PAM session step to the first `secret-tool lookup` answered", "",
                     "`\(command)`; pamtester `authenticate open_session` for a throwaway user, then `secret-tool lookup` as the user "
                         + "on the session's private bus; the clock starts after pam_authenticate (pam_unix) returns and stops when "
                         + "the secret is printed. The provider starts cold: latchkeyd by its socket at the session step, "
                         + "gnome-keyring-daemon by pam_gnome_keyring.", "",
                     "| provider | login to first secret, median | p99 | session step alone, median | authenticate, median |",
                     "|---|---|---|---|---|"]
        for result in results {
            lines.append("| \(result.provider) | \(formatDuration(result.login.median)) | \(formatDuration(result.login.percentile(0.99))) | "
                         + "\(formatDuration(result.session.median)) | \(formatDuration(result.authenticate.median)) |")
        }
        if let latchkey = results.first(where: { $0.provider.hasPrefix("Latchkey") }),
            let gnome = results.first(where: { $0.provider.hasPrefix("GNOME") }) {
            lines += ["", "Latchkey's login to the first secret is \(String(format: "%.2f", latchkey.login.median / gnome.login.median))× "
                          + "GNOME Keyring's (medians, \(latchkey.login.nanoseconds.count) samples each)."]
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
