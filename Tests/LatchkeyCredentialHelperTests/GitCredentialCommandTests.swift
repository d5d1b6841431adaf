import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// Debian's git with `credential.helper latchkey`: `git credential approve` stores through the helper,
/// `fill` reads back, `reject` erases — and when the helper has nothing, git asks its askpass.
@Suite struct GitCredentialCommandTests {
    @Test func approveFillRejectGoThroughTheHelper() throws {
        let sandbox = try HelperSandbox()
        let approved = try sandbox.gitCredential(
            "approve", lines("protocol=https", "host=example.com", "username=alice", "password=s3cret"))
        #expect(approved.status == 0 && approved.stderr.isEmpty, "\(approved.stderr)")

        let filled = try sandbox.gitCredential("fill", lines("protocol=https", "host=example.com"))
        #expect(filled.status == 0, "\(filled.stderr)")
        #expect(filled.stdout == lines("protocol=https", "host=example.com", "username=alice", "password=s3cret"))
        #expect(filled.stderr.isEmpty)

        // A reject naming another password erases nothing; one naming the stored password erases it.
        _ = try sandbox.gitCredential(
            "reject", lines("protocol=https", "host=example.com", "username=alice", "password=stale"))
        #expect(
            try sandbox.gitCredential("fill", lines("protocol=https", "host=example.com")).stdout.contains(
                "password=s3cret"))
        let rejected = try sandbox.gitCredential(
            "reject", lines("protocol=https", "host=example.com", "username=alice", "password=s3cret"))
        #expect(rejected.status == 0 && rejected.stderr.isEmpty)

        let asked = try sandbox.gitCredential("fill", lines("protocol=https", "host=example.com"))
        #expect(asked.status == 0)
        #expect(
            asked.stdout
                == lines("protocol=https", "host=example.com", "username=askpass-username", "password=askpass-password")
        )
        #expect(
            asked.stderr
                == lines(
                    "askpass: Username for 'https://example.com':",
                    "askpass: Password for 'https://askpass-username@example.com':"))
        #expect(try sandbox.internetPasswords().isEmpty)
    }

    @Test func theItemHasTheAttributesGitCredentialOsxkeychainWrites() throws {
        let sandbox = try HelperSandbox()
        var config = try sandbox.run("/usr/bin/git", ["config", "--global", "credential.useHttpPath", "true"])
        #expect(config.status == 0, "\(config.stderr)")
        config = try sandbox.run("/usr/bin/git", ["config", "--global", "credential.helper", "latchkey"])
        #expect(config.status == 0, "\(config.stderr)")
        let approved = try sandbox.run(
            "/usr/bin/git", ["credential", "approve"],
            input: lines("url=https://alice@git.example.com:8443/team/repo.git", "password=s3cret"))
        #expect(approved.status == 0, "\(approved.stderr)")
        let item = try #require(try sandbox.internetPasswords().first)
        #expect(item.itemClass == .internetPassword)
        #expect(item[.protocol] == .string("htps"))
        #expect(item[.server] == .string("git.example.com"))
        #expect(item[.port] == .number(8443))
        #expect(item[.path] == .string("team/repo.git"))
        #expect(item[.account] == .string("alice"))
        #expect(item[.authenticationType] == .string("dflt"))
        #expect(item[.securityDomain] == .string("") || item[.securityDomain] == nil)
        #expect(item[.accessGroup] == .string("git-credential-latchkey"))
        #expect(item.data == Data("s3cret".utf8))

        // The command line finds it as any internet password.
        let found = try sandbox.latchkey("find-internet-password", "-s", "git.example.com", "-a", "alice", "-w")
        #expect(found.stdout == "s3cret\n")
    }
}
