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
    /// How many words may follow the options.
    let positionals: ClosedRange<Int>
    /// Whether a first word that is not an option may come before the options, as `security import file -k
    /// keychain -P passphrase` has it.
    let leadingPositional: Bool
    let body: Body

    init(
        _ name: String, synopsis: String, summary: String, details: String, options: [OptionSpec],
        positionals: ClosedRange<Int> = 0...1, leadingPositional: Bool = false, body: @escaping Body
    ) {
        self.leadingPositional = leadingPositional
        self.name = name
        self.synopsis = synopsis
        self.summary = summary
        self.details = details
        self.options = options + [OptionSpec("h", "help", "Show this help.")]
        self.positionals = positionals
        self.body = body
    }

    var usageLine: String { "Usage: latchkey \(name) \(synopsis)" }

    /// Parses the words after the command's name (leading positionals first — as many words as the command
    /// takes, up to the first option — when the command takes them: `sync approve CODE --name x`).
    func parse(_ words: [String]) throws(UsageError) -> ParsedArguments {
        if leadingPositional {
            let leading = Array(words.prefix { !$0.hasPrefix("-") }.prefix(positionals.upperBound))
            if !leading.isEmpty {
                var parsed = try ArgumentParser.parse(Array(words.dropFirst(leading.count)), options: options)
                parsed.positionals.insert(contentsOf: leading, at: 0)
                return parsed
            }
        }
        return try ArgumentParser.parse(words, options: options)
    }

    /// The full help text.
    var help: String {
        var lines = [usageLine, "", summary, "", details, "", "Options:"]
        let width = options.map { $0.display.count }.max() ?? 0
        for option in options {
            lines.append("  " + option.display.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + option.help)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
