/// One command of the tool: its name, usage, help in full sentences, options and what it does.
struct Command: Sendable {
    /// Runs the command; returns the exit status.
    typealias Body = @Sendable (ParsedArguments, CLIContext) throws -> Int32

    let name: String
    /// The usage after the command name: `[-a account] [-s service] [keychain]`.
    let synopsis: String
    /// One sentence for the command list.
    let summary: String
    /// The full help, in sentences.
    let details: String
    let options: [OptionSpec]
    /// How many words (arguments that are not options) it takes.
    let positionals: ClosedRange<Int>
    /// Exit statuses of its own, with what each means, for its help and the manual (empty: the tool's rule).
    let exitStatuses: [(status: Int32, meaning: String)]
    let body: Body

    init(
        _ name: String, synopsis: String, summary: String, details: String, options: [OptionSpec],
        positionals: ClosedRange<Int> = 0...1, exitStatuses: [(status: Int32, meaning: String)] = [],
        body: @escaping Body
    ) {
        self.exitStatuses = exitStatuses
        self.name = name
        self.synopsis = synopsis
        self.summary = summary
        self.details = details
        self.options = options + [OptionSpec(.help, "Show this help.")]
        self.positionals = positionals
        self.body = body
    }

    var usageLine: String { "Usage: latchkey \(name) \(synopsis)" }

    /// Parses the words after the command's name (options may come before, between and after the words,
    /// as `security import file -k keychain -P passphrase` has them).
    func parse(_ words: [String]) throws(UsageError) -> ParsedArguments {
        try ArgumentParser.parse(words, options: options)
    }

    /// The full help text.
    var help: String {
        var lines = [usageLine, "", summary, "", details, "", "Options:"]
        let width = options.map { $0.display.count }.max() ?? 0
        for option in options {
            lines.append(
                "  " + option.display.padded(to: width) + "  " + option.help)
        }
        if !exitStatuses.isEmpty {
            lines += ["", "Exit statuses:"]
            for (status, meaning) in exitStatuses {
                lines.append("  " + String(status).padded(to: 5) + meaning)
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
