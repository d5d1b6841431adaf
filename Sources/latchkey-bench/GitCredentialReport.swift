extension Report {
    /// `git credential fill` through git-credential-latchkey (through the agent, and embedded) beside
    /// git-credential-libsecret (GNOME Keyring) and git-credential-store, each one git process per fill,
    /// medians of the same run.
    static func gitCredentialFill(_ peers: PeerResults) -> [String] {
        let workload = "git credential fill"
        let rows = [
            ("git-credential-latchkey, through latchkeyd", "git credential fill (git-credential-latchkey, agent)"),
            (
                "git-credential-latchkey, embedded (Argon2id per fill)",
                "git credential fill (git-credential-latchkey, embedded)"
            ),
            (
                "git-credential-libsecret (GNOME Keyring, private D-Bus session)",
                "git credential fill (git-credential-libsecret)"
            ),
            ("git-credential-store (plaintext ~/.git-credentials)", "git credential fill (git-credential-store)"),
        ]
        guard rows.contains(where: { peers.median($0.1, workload) != nil }) else { return [] }
        var lines = [
            "",
            "`git credential fill` (Debian's git, one process per fill) with each helper as `credential.helper`, "
                + "\(peers.size.formatted()) credentials stored in each:", "",
            "| helper | fill median | p10 | p90 | samples |", "|---|---:|---:|---:|---:|",
        ]
        for (name, tool) in rows {
            guard let samples = peers.tools[tool]?[workload] else { continue }
            lines.append(
                "| \(name) | \(formatDuration(samples.median)) | \(formatDuration(samples.p10)) | \(formatDuration(samples.p90)) | \(samples.nanoseconds.count) |"
            )
        }
        return lines + [""]
    }
}
