import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// Input that breaks git's protocol is refused with a message naming the line (never its content) and exit
/// status 65; the credential stored before it is untouched.
@Suite struct GitCredentialBadInputTests {
    static let good = lines("protocol=https", "host=example.com", "username=alice", "password=kept-secret")

    func sandboxHoldingOne() throws -> HelperSandbox {
        let sandbox = try HelperSandbox()
        let stored = try sandbox.gitHelper("store", Self.good)
        #expect(stored.status == 0, "\(stored.stderr)")
        return sandbox
    }

    func expectStillThere(_ sandbox: HelperSandbox) throws {
        let got = try sandbox.gitHelper("get", lines("protocol=https", "host=example.com"))
        #expect(got.stdout == lines("username=alice", "password=kept-secret"))
        #expect(try sandbox.internetPasswords().count == 1)
    }

    @Test(arguments: [
        ("protocol=https\nhost=example.com\npassword-without-equals\n", "line 3 has no '='"),
        ("protocol=https\nhost=example.com\nusername=al\u{0}ice\npassword=x\n", "line 3 holds a NUL byte"),
        (
            "protocol=https\nhost=example.com:http\nusername=alice\npassword=x\n",
            "the host's port is not a number from 0 to 65535"
        ),
        (
            "protocol=https\nhost=example.com:70000\nusername=alice\npassword=x\n",
            "the host's port is not a number from 0 to 65535"
        ),
    ])
    func malformedLinesAreRefused(input: String, reason: String) throws {
        let sandbox = try sandboxHoldingOne()
        for operation in ["store", "erase", "get"] {
            let output = try sandbox.gitHelper(operation, input)
            #expect(output.status == 65)
            #expect(output.stdout.isEmpty)
            #expect(output.stderr == "git-credential-latchkey: \(operation): bad input: \(reason)\n")
            #expect(!output.stderr.contains("password"), "the message shows no content")
        }
        try expectStillThere(sandbox)
    }

    @Test func aLineOfTenMegabytesIsRefusedWithoutReadingItAll() throws {
        let sandbox = try sandboxHoldingOne()
        let huge =
            "protocol=https\nhost=example.com\nusername=alice\npassword=" + String(repeating: "x", count: 10 << 20)
            + "\n"
        let started = Date()
        let output = try sandbox.gitHelper("store", huge)
        #expect(output.status == 65)
        #expect(
            output.stderr
                == "git-credential-latchkey: store: bad input: line 4 is longer than 65535 bytes, git's limit\n")
        #expect(Date().timeIntervalSince(started) < 30)
        try expectStillThere(sandbox)
    }

    @Test func moreThanAMebibyteOfShortLinesIsRefused() throws {
        let sandbox = try sandboxHoldingOne()
        let many =
            "protocol=https\nhost=example.com\n" + String(repeating: "wwwauth[]=Basic realm=\"x\"\n", count: 50_000)
        let output = try sandbox.gitHelper("erase", many)
        #expect(output.status == 65)
        #expect(output.stderr == "git-credential-latchkey: erase: bad input: more than 1 MiB\n")
        try expectStillThere(sandbox)
    }

    @Test func aUsernameThatIsNotUTF8IsRefused() throws {
        let sandbox = try sandboxHoldingOne()
        var input = Data("protocol=https\nhost=example.com\nusername=".utf8)
        input.append(contentsOf: [0xFF, 0xFE])
        input.append(Data("\npassword=x\n".utf8))
        let output = try HelperProcess.run(HelperSandbox.git, ["store"], environment: sandbox.environment, input: input)
        #expect(output.status == 65)
        #expect(output.stderr == "git-credential-latchkey: store: bad input: the username is not UTF-8 text\n")
        try expectStillThere(sandbox)
    }

    @Test func inputEndingWithoutABlankLineOrNewlineIsStillACredential() throws {
        let sandbox = try HelperSandbox()
        let stored = try sandbox.gitHelper(
            "store", "protocol=https\nhost=example.com\nusername=bob\npassword=last-line")
        #expect(stored.status == 0, "\(stored.stderr)")
        #expect(
            try sandbox.gitHelper("get", lines("protocol=https", "host=example.com")).stdout
                == lines("username=bob", "password=last-line"))
    }
}
