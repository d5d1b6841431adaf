import Foundation
import LatchkeyTestSupport
import Testing

@testable import LatchkeyCLI

/// `--help` for the tool and for each command, in full sentences, from the real binary.
@Suite(.dedicatedThreads) struct HelpTests {
    let sandbox = CLISandbox()

    static let commandNames = LatchkeyCommandLine.commands.map(\.name)

    @Test func everyCommandsDetailsAreProseWithSingleSpaces() {
        // A line continuation written wrong leaves the next line's indentation inside a sentence.
        for command in LatchkeyCommandLine.commands {
            #expect(!command.details.contains("  "), "latchkey help \(command.name) has a run of spaces")
            #expect(!command.details.contains("\n"), "latchkey help \(command.name) has a line break in its text")
        }
    }

    @Test func theToolsHelpListsEveryCommand() throws {
        for arguments in [["--help"], ["help"], ["-h"]] {
            let output = try sandbox.run(arguments)
            #expect(output.status == 0)
            #expect(
                output.stdout.hasPrefix(
                    "Usage: latchkey <command> [options] [keychain]\n\nLatchkey keeps passwords, tokens and keys"))
            for name in Self.commandNames { #expect(output.stdout.contains("\n  \(name) "), "\(name) is listed") }
        }
        let bare = try sandbox.run([String]())
        #expect(bare.status == 64)
        #expect(bare.stderr.hasPrefix("Usage: latchkey <command>"))
        #expect(try sandbox.run("--version").stdout == "latchkey 0.1.0\n")
    }

    @Test(arguments: commandNames)
    func everyCommandExplainsItselfInFullSentences(_ name: String) throws {
        let command = try #require(LatchkeyCommandLine.command(named: name))
        for arguments in [[name, "--help"], [name, "-h"], ["help", name]] {
            let output = try sandbox.run(arguments)
            #expect(output.status == 0)
            #expect(output.stdout == command.help)
            #expect(output.stderr == "")
        }
        #expect(command.help.hasPrefix("Usage: latchkey \(name) "))
        #expect(command.summary.hasSuffix("."))
        #expect(command.details.hasSuffix("."))
        for option in command.options { #expect(option.help.hasSuffix("."), "\(name) \(option.display)") }
    }

    @Test func helpForAnUnknownCommand() throws {
        let output = try sandbox.run("help", "frob")
        #expect(output.status == 64)
        #expect(output.stderr == "latchkey: help: there is no command \"frob\"\n")
    }

    @Test func addGenericPasswordsHelpInFull() throws {
        #expect(
            try sandbox.run("add-generic-password", "--help").stdout.hasPrefix(
                """
                Usage: latchkey add-generic-password -a account -s service [-w [password]] [options...] [keychain]

                Add a generic password item.

                Adds a generic password for an account and a service. The password is asked for twice when -w is the \
                last option; it can also come from -X, --password-fd or --password-stdin, and it is empty when none is \
                given.
                """))
    }
}
