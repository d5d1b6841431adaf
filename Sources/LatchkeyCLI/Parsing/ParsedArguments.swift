/// What a command's arguments said: flags, values, options that asked for a prompt, and the words after
/// the options. Options are read by their key only (`arguments.value(.account)`), found whichever of its
/// names was typed (`-k` or `--keychain`).
///
/// It knows which options its command declares, and reading any other is a mistake in the command — a key
/// of the same letter but another meaning, or a shared helper (the passphrase, the password) called by a
/// command that does not offer its options — that would read as "not given": debug builds stop on it.
struct ParsedArguments: Sendable, Equatable {
    /// The options the command declares.
    let declared: Set<OptionKey>
    private var flags: [OptionKey: Int] = [:]
    private var values: [OptionKey: [String]] = [:]
    private var prompts: Set<OptionKey> = []
    /// The words that are not options, in order.
    var positionals: [String] = []

    init(declaring options: [OptionSpec]) {
        declared = Set(options.map(\.key))
    }

    /// Whether the option was given: as a flag, with a value, or last, asking for a prompt.
    func has(_ key: OptionKey) -> Bool {
        checkDeclared(key)
        return flags[key] != nil || values[key] != nil || prompts.contains(key)
    }

    /// The option's value (the last, when it was given more than once).
    func value(_ key: OptionKey) -> String? {
        checkDeclared(key)
        return values[key]?.last
    }

    /// Every value the option was given, in order.
    func allValues(_ key: OptionKey) -> [String] {
        checkDeclared(key)
        return values[key] ?? []
    }

    /// Whether the option stood last without its value, asking for a prompt (`security`'s `-w`).
    func asksForPrompt(_ key: OptionKey) -> Bool {
        checkDeclared(key)
        return prompts.contains(key)
    }

    /// Every option given, whatever it is.
    var given: Set<OptionKey> { Set(flags.keys).union(values.keys).union(prompts) }

    mutating func addFlag(_ key: OptionKey) { flags[key, default: 0] += 1 }
    mutating func addValue(_ value: String, for key: OptionKey) { values[key, default: []].append(value) }
    mutating func addPrompt(_ key: OptionKey) { prompts.insert(key) }

    private func checkDeclared(_ key: OptionKey) {
        assert(declared.contains(key), "the command reads option \(key), which it does not declare")
    }
}
