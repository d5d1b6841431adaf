/// One option a command accepts: `-a account`, `--access-group group`, `-U`. Its letter and long name are
/// its key's (`OptionKey`); the spec adds how it takes a value and its help in this command.
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

    /// The key parsed results are kept under and read by.
    let key: OptionKey
    let argument: Argument
    /// The value's name in help ("account").
    let valueName: String
    /// One sentence of help.
    let help: String

    /// An option that takes a value: `OptionSpec(.account, .required, value: "account", "Match the account.")`.
    init(_ key: OptionKey, _ argument: Argument, value: String, _ help: String) {
        self.key = key
        self.argument = argument
        self.valueName = value
        self.help = help
    }

    /// A flag (no value): `OptionSpec(.update, "Update the item if it exists.")`.
    init(_ key: OptionKey, _ help: String) {
        self.init(key, .none, value: "", help)
    }

    /// The short letter, if any.
    var short: Character? { key.short }
    /// The long name without dashes, if any.
    var long: String? { key.long }

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
