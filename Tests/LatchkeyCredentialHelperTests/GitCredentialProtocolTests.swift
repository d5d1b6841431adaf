import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// git-credential-latchkey driven as git drives a helper: the operation as its argument, `key=value` lines on
/// standard input, the answer's lines on standard output.
@Suite struct GitCredentialProtocolTests {
    @Test func storeThenGetGivesTheUsernameAndPasswordBack() throws {
        let sandbox = try HelperSandbox()
        let stored = try sandbox.gitHelper(
            "store", lines("protocol=https", "host=example.com", "username=alice", "password=s3cret", ""))
        #expect(stored.status == 0 && stored.stdout.isEmpty && stored.stderr.isEmpty, "\(stored.stderr)")
        let got = try sandbox.gitHelper("get", lines("protocol=https", "host=example.com", ""))
        #expect(got.status == 0, "\(got.stderr)")
        #expect(got.stdout == lines("username=alice", "password=s3cret"))
        #expect(got.stderr.isEmpty)
        // With the username given, it is not repeated.
        let named = try sandbox.gitHelper("get", lines("protocol=https", "host=example.com", "username=alice"))
        #expect(named.stdout == lines("password=s3cret"))
    }

    @Test func nothingStoredIsAnEmptyAnswerAndSuccess() throws {
        let sandbox = try HelperSandbox()
        let got = try sandbox.gitHelper("get", lines("protocol=https", "host=example.com", ""))
        #expect(got.status == 0 && got.stdout.isEmpty && got.stderr.isEmpty)
        // Without a keychain file, get and erase find nothing and make no keychain.
        let empty = try HelperSandbox(createKeychain: false)
        for operation in ["get", "erase"] {
            let output = try empty.gitHelper(
                operation, lines("protocol=https", "host=example.com", "username=a", "password=b"))
            #expect(output.status == 0 && output.stdout.isEmpty && output.stderr.isEmpty, "\(output.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: empty.keychainPath))
    }

    @Test func protocolHostPortPathAndUsernameMustMatch() throws {
        let sandbox = try HelperSandbox()
        _ = try sandbox.gitHelper(
            "store",
            lines("protocol=https", "host=example.com:8443", "path=team/repo.git", "username=alice", "password=p1"))
        let misses = [
            lines("protocol=http", "host=example.com:8443"),
            lines("protocol=https", "host=example.com"),
            lines("protocol=https", "host=example.com:8444"),
            lines("protocol=https", "host=other.example.com:8443"),
            lines("protocol=https", "host=example.com:8443", "path=team/other.git"),
            lines("protocol=https", "host=example.com:8443", "username=bob"),
        ]
        for request in misses {
            let output = try sandbox.gitHelper("get", request)
            #expect(output.status == 0 && output.stdout.isEmpty, "\(request) found \(output.stdout)")
        }
        // No path asked (credential.useHttpPath off): any path matches, as in git-credential-store.
        let hit = try sandbox.gitHelper("get", lines("protocol=https", "host=example.com:8443"))
        #expect(hit.stdout == lines("username=alice", "password=p1"))
        let exact = try sandbox.gitHelper("get", lines("protocol=https", "host=example.com:8443", "path=team/repo.git"))
        #expect(exact.stdout == lines("username=alice", "password=p1"))
    }

    @Test func expiryAndRefreshTokenAreKeptWithThePassword() throws {
        let sandbox = try HelperSandbox()
        let stored = try sandbox.gitHelper(
            "store",
            lines(
                "protocol=https", "host=git.example.com", "username=bot", "password=access-1",
                "password_expiry_utc=9999999999", "oauth_refresh_token=refresh-1"))
        #expect(stored.status == 0, "\(stored.stderr)")
        let got = try sandbox.gitHelper("get", lines("protocol=https", "host=git.example.com"))
        #expect(
            got.stdout
                == lines(
                    "username=bot", "password=access-1", "password_expiry_utc=9999999999",
                    "oauth_refresh_token=refresh-1"))
        // Storing again without them drops them.
        _ = try sandbox.gitHelper(
            "store", lines("protocol=https", "host=git.example.com", "username=bot", "password=access-2"))
        let again = try sandbox.gitHelper("get", lines("protocol=https", "host=git.example.com"))
        #expect(again.stdout == lines("username=bot", "password=access-2"))
    }

    @Test func stateIsHandedOnlyToAGitThatAnnouncesItAndSkipsTheSameStore() throws {
        let sandbox = try HelperSandbox()
        _ = try sandbox.gitHelper(
            "store", lines("protocol=https", "host=example.com", "username=alice", "password=s3cret"))
        let got = try sandbox.gitHelper("get", lines("capability[]=state", "protocol=https", "host=example.com"))
        let answer = got.stdout.split(separator: "\n").map(String.init)
        #expect(answer.count == 4)
        #expect(Array(answer.prefix(3)) == ["capability[]=state", "username=alice", "password=s3cret"])
        let state = try #require(answer.last)
        #expect(state.hasPrefix("state[]=latchkey:seen=") && state.count == "state[]=latchkey:seen=".count + 32)
        #expect(!state.contains("s3cret"))
        // git's store of what the helper just gave it does not even open the keychain: without a passphrase
        // (and no terminal, no agent) it succeeds with the state and fails without it.
        let skipped = try sandbox.gitHelper(
            "store",
            lines(
                "capability[]=state", "protocol=https", "host=example.com", "username=alice", "password=s3cret", state),
            environment: sandbox.headless)
        #expect(skipped.status == 0 && skipped.stderr.isEmpty, "\(skipped.stderr)")
        let opened = try sandbox.gitHelper(
            "store", lines("protocol=https", "host=example.com", "username=alice", "password=s3cret"),
            environment: sandbox.headless)
        #expect(opened.status == 36, "\(opened.stderr)")
        // Another helper's state, or a changed password, is stored.
        let changed = try sandbox.gitHelper(
            "store",
            lines("capability[]=state", "protocol=https", "host=example.com", "username=alice", "password=n3w", state))
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(
            try sandbox.gitHelper("get", lines("protocol=https", "host=example.com")).stdout
                == lines("username=alice", "password=n3w"))
        // Without the capability announced, no state.
        #expect(
            try sandbox.gitHelper("get", lines("protocol=https", "host=example.com")).stdout.contains("state") == false)
    }

    @Test func eraseRemovesOnlyAMatchingPassword() throws {
        let sandbox = try HelperSandbox()
        _ = try sandbox.gitHelper(
            "store", lines("protocol=https", "host=example.com", "username=alice", "password=right"))
        _ = try sandbox.gitHelper(
            "store", lines("protocol=https", "host=example.com", "username=bob", "password=other"))
        let wrong = try sandbox.gitHelper(
            "erase", lines("protocol=https", "host=example.com", "username=alice", "password=wrong"))
        #expect(wrong.status == 0 && wrong.stderr.isEmpty)
        #expect(try sandbox.internetPasswords().count == 2)
        let right = try sandbox.gitHelper(
            "erase", lines("protocol=https", "host=example.com", "username=alice", "password=right"))
        #expect(right.status == 0 && right.stderr.isEmpty)
        #expect(try sandbox.internetPasswords().compactMap { $0[.account]?.stringValue } == ["bob"])
        // Without a password or a username, every credential of the host goes.
        _ = try sandbox.gitHelper(
            "store", lines("protocol=https", "host=example.com:8443", "username=carol", "password=kept"))
        let all = try sandbox.gitHelper("erase", lines("protocol=https", "host=example.com"))
        #expect(all.status == 0)
        #expect(try sandbox.internetPasswords().compactMap { $0[.account]?.stringValue } == ["carol"])
    }

    @Test func anEmptyUsernameAndPasswordAreACredential() throws {
        let sandbox = try HelperSandbox()
        _ = try sandbox.gitHelper("store", lines("protocol=https", "host=sso.example.com", "username=", "password="))
        let got = try sandbox.gitHelper("get", lines("protocol=https", "host=sso.example.com"))
        #expect(got.stdout == lines("username=", "password="))
    }

    @Test func ipv6HostsKeepTheirPortApart() throws {
        let sandbox = try HelperSandbox()
        _ = try sandbox.gitHelper("store", lines("protocol=http", "host=[::1]:8080", "username=alice", "password=v6"))
        #expect(
            try sandbox.gitHelper("get", lines("protocol=http", "host=[::1]:8080")).stdout
                == lines("username=alice", "password=v6"))
        #expect(try sandbox.gitHelper("get", lines("protocol=http", "host=[::1]")).stdout.isEmpty)
        let item = try #require(try sandbox.internetPasswords().first)
        #expect(item[.server] == .string("::1") && item[.port] == .number(8080))
    }

    @Test func otherProtocolsUnknownKeysAndUnknownOperationsAreIgnored() throws {
        let sandbox = try HelperSandbox()
        // git-credential-osxkeychain keeps no other protocol; neither does this helper (the next helper may).
        let cert = try sandbox.gitHelper(
            "store", lines("protocol=cert", "host=", "path=/home/a/cert.p12", "username=a", "password=b"))
        #expect(cert.status == 0 && cert.stderr.isEmpty)
        // Keys of a newer git are ignored, as git-credential(1) asks.
        let future = try sandbox.gitHelper(
            "store",
            lines(
                "protocol=https", "host=example.com", "wwwauth[]=Basic realm=\"x\"", "authtype=Basic", "future_key=1",
                "username=alice", "password=p"))
        #expect(future.status == 0 && future.stderr.isEmpty)
        #expect(try sandbox.internetPasswords().count == 1)
        let unknown = try sandbox.gitHelper("frobnicate", lines("protocol=https", "host=example.com"))
        #expect(unknown.status == 0 && unknown.stdout.isEmpty && unknown.stderr.isEmpty)
        // An incomplete credential is not stored, and is no error (git-credential-store does the same).
        let incomplete = try sandbox.gitHelper(
            "store", lines("protocol=https", "host=example.com", "username=nopassword"))
        #expect(incomplete.status == 0 && incomplete.stderr.isEmpty)
        #expect(try sandbox.internetPasswords().count == 1)
    }

    @Test func capabilityVersionAndUsage() throws {
        let sandbox = try HelperSandbox()
        let capability = try sandbox.run(HelperSandbox.git, ["capability"])
        #expect(capability.status == 0 && capability.stdout == "version 0\ncapability state\n")
        let version = try sandbox.run(HelperSandbox.git, ["--version"])
        #expect(version.status == 0 && version.stdout == "git-credential-latchkey (latchkey) 0.1.0\n")
        let bare = try sandbox.run(HelperSandbox.git, [])
        #expect(
            bare.status == 64 && bare.stdout.isEmpty
                && bare.stderr == "usage: git-credential-latchkey <get|store|erase>\n")
        let option = try sandbox.run(HelperSandbox.git, ["--frob", "get"])
        #expect(option.status == 64)
        #expect(
            option.stderr
                == "git-credential-latchkey: unknown option \"--frob\"\nusage: git-credential-latchkey <get|store|erase>\n"
        )
    }
}
