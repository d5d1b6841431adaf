@testable import LatchkeyCLI
import LatchkeyTestSupport
import Testing

/// The parser behind every command: BSD getopt rules plus long options.
@Suite(.dedicatedThreads) struct ArgumentParserTests {
    let options = [
        OptionSpec("a", nil, .required, value: "account", "Account."),
        OptionSpec("g", "Flag."),
        OptionSpec("U", "Flag."),
        OptionSpec("w", nil, .requiredOrPrompt, value: "password", "Password."),
        OptionSpec(nil, "access-group", .required, value: "group", "Group."),
        OptionSpec(nil, "synchronizable", "Flag."),
    ]

    @Test func shortOptionsGroupsAndAttachedValues() throws {
        let parsed = try ArgumentParser.parse(["-gU", "-aalice", "-w", "pw", "keychain"], options: options)
        #expect(parsed.flags == ["g": 1, "U": 1])
        #expect(parsed.value("a") == "alice")
        #expect(parsed.value("w") == "pw")
        #expect(parsed.positionals == ["keychain"])
    }

    @Test func aTrailingValueOptionAsksForAPrompt() throws {
        let parsed = try ArgumentParser.parse(["-a", "x", "-w"], options: options)
        #expect(parsed.prompts == ["w"])
        #expect(parsed.value("w") == nil)
        // As with getopt, "-w -U" takes "-U" as the password.
        #expect(try ArgumentParser.parse(["-w", "-U"], options: options).value("w") == "-U")
    }

    @Test func longOptions() throws {
        let parsed = try ArgumentParser.parse(["--access-group=g1", "--synchronizable", "--access-group", "g2"], options: options)
        #expect(parsed.allValues("access-group") == ["g1", "g2"])
        #expect(parsed.flags["synchronizable"] == 1)
    }

    @Test func optionsEndAtTheFirstWordOrAtDoubleDash() throws {
        #expect(try ArgumentParser.parse(["kc", "-g"], options: options).positionals == ["kc", "-g"])
        #expect(try ArgumentParser.parse(["--", "-g"], options: options).positionals == ["-g"])
        #expect(try ArgumentParser.parse(["-"], options: options).positionals == ["-"])
    }

    @Test(arguments: [
        (["-Z"], "unknown option -Z"),
        (["-gZ"], "unknown option -Z"),
        (["-a"], "option -a needs a account"),
        (["--nope"], "unknown option --nope"),
        (["--access-group"], "option --access-group needs a group"),
        (["--synchronizable=yes"], "option --synchronizable takes no value"),
    ])
    func mistakesAreUsageErrorsNamingTheOption(_ words: [String], _ message: String) {
        #expect(throws: UsageError(message: message)) { try ArgumentParser.parse(words, options: options) }
    }
}
