/// An option's name in the code: its letter and its long name, written once, in the key's declaration
/// (`static let account = OptionKey(short: "a")`, in OptionKey+Commands.swift). A command declares the
/// option with the key (`OptionSpec(.account, .required, value: "account", …)`) and reads what was given by
/// the same key (`arguments.value(.account)`): a misspelt name does not compile, where a misspelt string
/// read silently as "not given".
///
/// A key is its declaration, as a swift-argument-parser option is its property: two keys are equal only when
/// they are the same key, even when they share a letter. `-a` is the account in `find-generic-password` and
/// every keychain in `lock-keychain`; they are `.account` and `.everyKeychain`, and a command that reads the
/// one while it declares the other is caught in debug builds (`ParsedArguments`).
final class OptionKey: Hashable, Sendable, CustomStringConvertible {
    /// The short letter, if any.
    let short: Character?
    /// The long name without dashes, if any.
    let long: String?

    init(short: Character? = nil, long: String? = nil) {
        precondition(short != nil || long != nil, "an option needs a letter or a long name")
        self.short = short
        self.long = long
    }

    /// The name messages give it: `--access-group`, else `-a`.
    var spelling: String { long.map { "--\($0)" } ?? "-\(short!)" }

    var description: String { spelling }

    static func == (lhs: OptionKey, rhs: OptionKey) -> Bool { lhs === rhs }

    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
