/// One option a command accepts: `-a account`, `--access-group group`, `-U`.
struct OptionSpec: Sendable {
    /// How an option takes its value.
    enum Argument: Sendable {
        /// A flag: `-U`.
        case none
        /// A value is required: `-a alice` or `-aalice` or `--access-group=g`.
        case required
        /// A value, or — when the option is the last word — a prompt (`security`'s `-w`).
        case requiredOrPrompt
    }

    /// The short letter, if any.
    let short: Character?
    /// The long name without dashes, if any.
    let long: String?
    let argument: Argument
    /// The value's name in help ("account").
    let valueName: String
    /// One sentence of help.
    let help: String

    init(
        _ short: Character?, _ long: String? = nil, _ argument: Argument = .none, value: String = "value",
        _ help: String
    ) {
        self.short = short
        self.long = long
        self.argument = argument
        self.valueName = value
        self.help = help
    }

    /// A flag (no value) with a long name.
    init(_ short: Character?, _ long: String?, _ help: String) {
        self.init(short, long, .none, value: "", help)
    }

    /// A flag (no value) with a short letter only.
    init(_ short: Character, _ help: String) {
        self.init(short, nil, .none, value: "", help)
    }

    /// The name parsed results are keyed by: the long name, else the letter.
    var key: String { long ?? String(short!) }

    /// `-a account, --account account` for help.
    var display: String {
        let value = argument == .none ? "" : " \(valueName)"
        switch (short, long) {
        case let (s?, l?): return "-\(s)\(value), --\(l)\(value)"
        case let (s?, nil): return "-\(s)\(value)"
        case let (nil, l?): return "--\(l)\(value)"
        default: return ""
        }
    }
}
