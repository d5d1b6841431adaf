import Foundation

/// The Secret Service's first answer after a cold D-Bus activation and its search among many items, Latchkey
/// beside GNOME Keyring (`--peers`, or alone with `--secret-service`), measured by `bench/secret-service.py` on
/// a private session bus whose only service directory is the run's own: the bus starts each provider from its
/// `.service` file, as a desktop's bus does. Issue 33's goals: activation under 150 ms, search p99 under 5 ms
/// among 10,000 items.
struct SecretServiceWorkloads {
    let samples: Int
    let items: Int
    let binDirectory: String
    let script: String
    let python: String

    struct Result {
        let provider: String
        let activation: Samples
        let search: Samples
    }

    func run() throws -> (results: [Result], notes: [String: Double]) {
        let data = try driverOutput(
            python: python, script: script,
            ["--bin", binDirectory, "--samples", "\(samples)", "--items", "\(items)"])
        let decoded = try JSONDecoder().decode(ProviderDriverOutput.self, from: data)
        let results = decoded.results.sorted { $0.key > $1.key }.map { provider, figures in
            Result(
                provider: provider, activation: Samples(figures["activation"] ?? []),
                search: Samples(figures["search"] ?? []))
        }
        return (results, decoded.notes)
    }

    /// The report's section.
    static func render(_ run: (results: [Result], notes: [String: Double]), items: Int, command: String) -> String {
        var lines = [
            "### The Secret Service: cold D-Bus activation to the first answer, and a search among \(items.formatted()) items",
            "",
            "`\(command)`; a private session bus starts the provider from its `.service` file for each activation sample "
                + "(ReadAlias(\"default\") answered); SearchItems for one random item's two attributes.", "",
            "| provider | activation median | activation p99 | search median | search p99 |",
            "|---|---|---|---|---|",
        ]
        func cells(_ samples: Samples) -> String {
            samples.nanoseconds.isEmpty
                ? "– | –" : "\(formatDuration(samples.median)) | \(formatDuration(samples.percentile(0.99)))"
        }
        for result in run.results {
            lines.append("| \(result.provider) | \(cells(result.activation)) | \(cells(result.search)) |")
        }
        if let floor = run.results.first(where: { $0.provider.hasPrefix("floor") }),
            !floor.activation.nanoseconds.isEmpty
        {
            let ratios = run.results.filter { !$0.provider.hasPrefix("floor") && !$0.activation.nanoseconds.isEmpty }
                .map { "\($0.provider) \(String(format: "%.2f", $0.activation.median / floor.activation.median))×" }
            lines += [
                "",
                "Activation's floor (issue 56), in the same run: a static program started the same way that connects, "
                    + "owns the name and answers — \(formatDuration(floor.activation.median)); each provider's "
                    + "activation against it: \(ratios.joined(separator: ", ")).",
            ]
        }
        if let latchkey = run.results.first(where: { $0.provider.hasPrefix("Latchkey") }) {
            let activation = latchkey.activation.median
            let search = latchkey.search.percentile(0.99)
            lines += [
                "",
                "Latchkey: activation median \(formatDuration(activation)) — goal under 150 ms: \(activation < 150e6 ? "met" : "not met"); "
                    + "search p99 \(formatDuration(search)) — goal under 5 ms: \(search < 5e6 ? "met" : "not met").",
            ]
        }
        for (name, seconds) in run.notes.sorted(by: { $0.key < $1.key }) {
            lines.append("\(name): \(String(format: "%.1f", seconds)) s.")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
