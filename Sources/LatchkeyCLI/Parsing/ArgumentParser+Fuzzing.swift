/// What latchkey-fuzz reaches of the command line. The fuzzer imports modules plainly, never with
/// `@testable` (which needs `-enable-testing` and so broke `swift build -c release`), so the parser it
/// drives is reached through these package-level doors.
extension LatchkeyCommandLine {
    /// The commands' names, in the order `fuzzParse` indexes them.
    package static var commandNames: [String] { commandTable.map(\.name) }

    /// Parses `words` with the options of the command at `index` (modulo the number of commands) and looks
    /// the first word up as a command name; returns the usage error's message, or nil when the words parse.
    package static func fuzzParse(commandAt index: Int, _ words: [String]) -> String? {
        let command = commandTable[index % commandTable.count].command()
        _ = self.command(named: words.first ?? "")
        do throws(UsageError) {
            _ = try ArgumentParser.parse(words, options: command.options).positionals
            return nil
        } catch {
            return error.message
        }
    }
}
