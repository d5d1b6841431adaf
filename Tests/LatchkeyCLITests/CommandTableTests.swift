import Testing

@testable import LatchkeyCLI

/// The command table builds each command only when it is asked for (the CLI's start): its names must be the
/// commands' own, each once.
@Suite struct CommandTableTests {
    @Test func eachNameIsItsCommands() {
        for entry in LatchkeyCommandLine.commandTable {
            #expect(entry.command().name == entry.name)
        }
    }

    @Test func namesAreUnique() {
        let names = LatchkeyCommandLine.commandTable.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(names.count == 37)
    }

    @Test func lookUpFindsOnlyTheNamedCommand() {
        #expect(LatchkeyCommandLine.command(named: "find-generic-password")?.name == "find-generic-password")
        #expect(LatchkeyCommandLine.command(named: "find-generic") == nil)
        #expect(LatchkeyCommandLine.command(named: "") == nil)
    }
}
