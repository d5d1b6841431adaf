import Testing

@testable import LatchkeyCLI

/// A command that reads an option it does not declare — a key of the same letter but another meaning, or a
/// shared helper's option the command does not offer — would read "not given" for ever: debug builds stop
/// there instead, so a test that runs the command fails.
@Suite struct UndeclaredOptionTests {
    static let options = [
        OptionSpec(.account, .required, value: "account", "The account."),
        OptionSpec(.update, "Update."),
    ]

    @Test func theDeclaredOptionsAreTheCommandsOwn() throws {
        let parsed = try ArgumentParser.parse(["-a", "alice"], options: Self.options)
        #expect(parsed.declared == [.account, .update])
        #expect(!parsed.has(.update))
        #expect(parsed.value(.update) == nil)
        let lock = try #require(LatchkeyCommandLine.command(named: "lock-keychain"))
        #expect(try lock.parse([]).declared == [.everyKeychain, .help])
    }

    #if DEBUG
        @Test func readingAnOptionOfTheSameLetterButAnotherMeaningStops() async {
            await #expect(processExitsWith: .failure) {
                let parsed = try ArgumentParser.parse(
                    ["-a", "alice"], options: [OptionSpec(.account, .required, value: "account", "The account.")])
                _ = parsed.has(.everyKeychain)
            }
        }

        @Test func readingAnUndeclaredOptionStopsWhicheverWayItIsRead() async {
            await #expect(processExitsWith: .failure) {
                _ = try ArgumentParser.parse([], options: []).value(.passphraseFD)
            }
            await #expect(processExitsWith: .failure) {
                _ = try ArgumentParser.parse([], options: []).allValues(.accessGroup)
            }
            await #expect(processExitsWith: .failure) {
                _ = try ArgumentParser.parse([], options: []).asksForPrompt(.password)
            }
        }

        /// A shared helper reads the passphrase options: a command that calls it without declaring them stops.
        @Test func aSharedHelperCalledByACommandWithoutItsOptionsStops() async {
            await #expect(processExitsWith: .failure) {
                let parsed = try ArgumentParser.parse([], options: [])
                let context = CLIContext(
                    environment: [:], stdout: BufferSink(), stderr: BufferSink(), interactive: false)
                _ = context.hasPassphraseSource(parsed)
            }
        }
    #endif
}
