import LatchkeyTestSupport
import Testing

@testable import LatchkeyCLI

/// The options of these tests, by key.
private enum Key {
    static let a = OptionKey(short: "a")
    static let g = OptionKey(short: "g")
    static let U = OptionKey(short: "U")
    static let w = OptionKey(short: "w")
    static let accessGroup = OptionKey(long: "access-group")
    static let synchronizable = OptionKey(long: "synchronizable")
}

/// The parser behind every command: getopt's short options, long options, and options anywhere before `--`.
@Suite(.dedicatedThreads) struct ArgumentParserTests {
    let options = [
        OptionSpec(Key.a, .required, value: "account", "Account."),
        OptionSpec(Key.g, "Flag."),
        OptionSpec(Key.U, "Flag."),
        OptionSpec(Key.w, .requiredOrPrompt, value: "password", "Password."),
        OptionSpec(Key.accessGroup, .required, value: "group", "Group."),
        OptionSpec(Key.synchronizable, "Flag."),
    ]

    @Test func shortOptionsGroupsAndAttachedValues() throws {
        let parsed = try ArgumentParser.parse(["-gU", "-aalice", "-w", "pw", "keychain"], options: options)
        #expect(parsed.given == [Key.g, Key.U, Key.a, Key.w])
        #expect(parsed.value(Key.a) == "alice")
        #expect(parsed.value(Key.w) == "pw")
        #expect(parsed.positionals == ["keychain"])
    }

    @Test func aTrailingValueOptionAsksForAPrompt() throws {
        let parsed = try ArgumentParser.parse(["-a", "x", "-w"], options: options)
        #expect(parsed.asksForPrompt(Key.w))
        #expect(parsed.given == [Key.a, Key.w])
        #expect(parsed.value(Key.w) == nil)
        // As with getopt, "-w -U" takes "-U" as the password.
        #expect(try ArgumentParser.parse(["-w", "-U"], options: options).value(Key.w) == "-U")
    }

    @Test func longOptions() throws {
        let parsed = try ArgumentParser.parse(
            ["--access-group=g1", "--synchronizable", "--access-group", "g2"], options: options)
        #expect(parsed.allValues(Key.accessGroup) == ["g1", "g2"])
        #expect(parsed.has(Key.synchronizable))
        #expect(parsed.given == [Key.accessGroup, Key.synchronizable])
    }

    @Test func optionsEndOnlyAtDoubleDash() throws {
        let after = try ArgumentParser.parse(["kc", "-g"], options: options)
        #expect(after.given == [Key.g])
        #expect(after.positionals == ["kc"])
        #expect(try ArgumentParser.parse(["--", "-g"], options: options).positionals == ["-g"])
        #expect(
            try ArgumentParser.parse(["kc", "--", "-g", "--"], options: options).positionals == ["kc", "-g", "--"])
        #expect(try ArgumentParser.parse(["-"], options: options).positionals == ["-"])
        #expect(try ArgumentParser.parse(["-", "-g"], options: options).given == [Key.g])
    }

    /// `find-generic-password -a A -s S ./c.keychain -w`, `register-application EXE --passphrase-file F`: every
    /// order of the same options and words parses to the same result, as macOS `security` users type them.
    @Test func optionsMayComeBeforeBetweenAndAfterTheWords() throws {
        let pieces: [[String]] = [
            ["-a", "alice"], ["-gU"], ["--access-group", "g1"], ["--access-group=g2"], ["kc"], ["second"],
        ]
        var orders: [[[String]]] = [[]]
        for piece in pieces {
            orders = orders.flatMap { order in
                (0...order.count).map { at in Array(order[..<at]) + [piece] + Array(order[at...]) }
            }
        }
        #expect(orders.count == 720)
        for order in orders {
            let parsed = try ArgumentParser.parse(order.flatMap { $0 }, options: options)
            let words = order.filter { ["kc", "second"].contains($0[0]) }.map { $0[0] }
            #expect(parsed.positionals == words, "\(order)")
            #expect(parsed.given == [Key.g, Key.U, Key.a, Key.accessGroup], "\(order)")
            #expect(parsed.value(Key.a) == "alice", "\(order)")
            #expect(
                parsed.allValues(Key.accessGroup)
                    == order.compactMap {
                        $0 == ["--access-group", "g1"] ? "g1" : $0 == ["--access-group=g2"] ? "g2" : nil
                    },
                "\(order)")
        }
    }

    @Test func aValueOptionAfterTheWordsStillTakesItsValueOrAsksForIt() throws {
        // Last: a prompt (security's "put -w at the end"), the keychain stays a word.
        let asking = try ArgumentParser.parse(["-a", "alice", "./c.keychain", "-w"], options: options)
        #expect(asking.asksForPrompt(Key.w))
        #expect(asking.positionals == ["./c.keychain"])
        // Followed by a word: that word is the value, wherever the option stands (getopt's rule).
        let given = try ArgumentParser.parse(["./c.keychain", "-w", "pw", "-g"], options: options)
        #expect(given.value(Key.w) == "pw")
        #expect(given.positionals == ["./c.keychain"])
        #expect(given.given == [Key.w, Key.g])
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
