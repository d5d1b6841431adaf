import Testing

@testable import LatchkeyCLI

/// Every command's options, as the command table builds them: a letter or a long name names one option of a
/// command, and a key one option.
@Suite struct CommandOptionTests {
    static let commandNames = LatchkeyCommandLine.commandTable.map(\.name)

    @Test(arguments: commandNames)
    func noTwoOptionsOfACommandShareALetterOrALongName(_ name: String) throws {
        let command = try #require(LatchkeyCommandLine.command(named: name))
        let letters = command.options.compactMap(\.short)
        let longs = command.options.compactMap(\.long)
        #expect(Set(letters).count == letters.count, "\(name) declares a letter twice: \(letters)")
        #expect(Set(longs).count == longs.count, "\(name) declares a long name twice: \(longs)")
        let keys = command.options.map(\.key)
        #expect(Set(keys).count == keys.count, "\(name) declares a key twice")
        #expect(command.options.last?.key == .help)
    }

    /// The parser takes the first option of a letter: a command that declared two would parse one and never
    /// the other, which is what the test above keeps out.
    @Test func aLetterDeclaredTwiceWouldBeCaught() {
        let options = [
            OptionSpec(.account, .required, value: "account", "The account."),
            OptionSpec(.everyKeychain, "Every keychain."),
        ]
        let letters = options.compactMap(\.short)
        #expect(Set(letters).count != letters.count)
    }
}
