import Foundation
import LatchkeyTestSupport
import Testing

/// Bad input gets a clear message and a non-zero status, and never changes the keychain.
@Suite(.dedicatedThreads) struct BadInputTests {
    let sandbox = CLISandbox()

    static let cases: [(arguments: [String], status: Int32, message: String)] = [
        (["frobnicate"], 64, "latchkey: unknown command \"frobnicate\"; `latchkey help` lists the commands\n"),
        (
            ["find-generic-password", "-Z"], 64,
            "latchkey: find-generic-password: unknown option -Z\nUsage: latchkey find-generic-password [-a account] [-s service] [options...] [-g | -w] [keychain]\n"
        ),
        (
            ["find-generic-password", "-a"], 64,
            "latchkey: find-generic-password: option -a needs a account\nUsage: latchkey find-generic-password [-a account] [-s service] [options...] [-g | -w] [keychain]\n"
        ),
        (
            ["add-generic-password", "-s", "s", "-w", "x"], 64,
            "latchkey: add-generic-password: -a account is required\nUsage: latchkey add-generic-password -a account -s service [-w [password]] [options...] [keychain]\n"
        ),
        (
            ["add-generic-password", "-a", "a", "-s", "s", "-X", "zz"], 64,
            "latchkey: add-generic-password: -X must specify valid hex digits\nUsage: latchkey add-generic-password -a account -s service [-w [password]] [options...] [keychain]\n"
        ),
        (
            ["add-internet-password", "-a", "a", "-s", "h", "-P", "https"], 64,
            "latchkey: add-internet-password: -P needs a port number between 0 and 65535, not 'https'\nUsage: latchkey add-internet-password -a account -s server [-w [password]] [options...] [keychain]\n"
        ),
        (
            ["add-internet-password", "-a", "a", "-s", "h", "-P", "70000"], 64,
            "latchkey: add-internet-password: -P needs a port number between 0 and 65535, not '70000'\nUsage: latchkey add-internet-password -a account -s server [-w [password]] [options...] [keychain]\n"
        ),
        (
            ["add-internet-password", "-a", "a", "-s", "h", "-r", "ftp"], 64,
            "latchkey: add-internet-password: -r takes a four-character code, exactly 4 characters long (try \"ftp \" instead of \"ftp\")\nUsage: latchkey add-internet-password -a account -s server [-w [password]] [options...] [keychain]\n"
        ),
        (
            ["delete-generic-password"], 64,
            "latchkey: delete-generic-password: name the item to delete with at least one option (for example -a and -s)\nUsage: latchkey delete-generic-password [-a account] [-s service] [options...] [keychain]\n"
        ),
        (
            ["find-generic-password", "-s", "s", "one", "two"], 64,
            "latchkey: find-generic-password: unexpected argument \"two\"\nUsage: latchkey find-generic-password [-a account] [-s service] [options...] [-g | -w] [keychain]\n"
        ),
        (
            ["set-keychain-settings", "-t", "soon"], 64,
            "latchkey: set-keychain-settings: -t needs a positive number of seconds, not 'soon'\nUsage: latchkey set-keychain-settings [-lu] [-t timeout] [keychain]\n"
        ),
        (["find-generic-password", "-s", "s", "missing.keychain"], 50, ""),
    ]

    @Test(arguments: cases.indices)
    func badInputIsRefusedAndChangesNothing(_ index: Int) throws {
        let (arguments, expected, message) = Self.cases[index]
        try sandbox.createKeychain()
        try sandbox.run("add-generic-password", "-a", "a", "-s", "keep", "--password-stdin", input: "kept")
        let before = try sandbox.snapshot()
        let output = try sandbox.run(arguments)
        if expected == 50 {
            // A keychain that does not exist: errSecNoSuchKeychain (-25294), exit status 0x32.
            #expect(output.status == 50)
            #expect(
                output.stderr.hasPrefix("latchkey: find-generic-password: The specified keychain could not be found."))
        } else {
            #expect(output.status == expected)
            #expect(output.stderr == message)
        }
        #expect(output.stdout == "")
        #expect(try sandbox.snapshot() == before)
        #expect(try sandbox.run("find-generic-password", "-s", "keep", "-w").stdout == "kept\n")
    }

    @Test func aHugeValueIsParamAndChangesNothing() throws {
        try sandbox.createKeychain()
        let before = try sandbox.snapshot()
        let output = try sandbox.run(
            ["add-generic-password", "-a", "a", "-s", "big", "--password-stdin"],
            input: Data(count: (16 << 20) + 10))
        #expect(output.status == 206)
        #expect(output.stderr.contains("One or more parameters passed to a function were not valid."))
        #expect(try sandbox.snapshot() == before)
    }

    @Test func aWrongPassphraseIsAuthFailed() throws {
        try sandbox.createKeychain()
        var wrong = sandbox.environment
        wrong["LATCHKEY_PASSPHRASE"] = "not it"
        let before = try sandbox.snapshot()
        let output = try sandbox.run(
            ["add-generic-password", "-a", "a", "-s", "s", "--password-stdin"], environment: wrong,
            input: Data("x".utf8))
        #expect(output.status == 51)
        #expect(
            output.stderr == "latchkey: add-generic-password: The user name or passphrase you entered is not correct.\n"
        )
        #expect(try sandbox.snapshot() == before)
    }

    @Test func aDamagedOrForeignKeychainFileIsRefusedUntouched() throws {
        let path = sandbox.directory.file("foreign.keychain")
        let contents = Data("this is a plain text file, not a keychain\n".utf8)
        #expect(
            FileManager.default.createFile(atPath: path, contents: contents, attributes: [.posixPermissions: 0o600]))
        let output = try sandbox.run("find-generic-password", "-s", "s", path)
        #expect(output.status == 49)
        #expect(
            output.stderr
                == "latchkey: find-generic-password: The specified keychain is not a valid keychain file. (\(path) is not a Latchkey keychain (not an SQLite database))\n"
        )
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == contents)
    }
}
