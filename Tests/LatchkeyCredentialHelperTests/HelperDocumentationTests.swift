import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// What the README and the helpers' `--help` tell a user runs as printed.
@Suite struct HelperDocumentationTests {
    static var readme: String {
        get throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent()
            return try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        }
    }

    static func block(containing text: String) throws -> String {
        let blocks = try readme.components(separatedBy: "```sh\n").dropFirst().map {
            $0.components(separatedBy: "```")[0]
        }
        return try #require(blocks.first { $0.contains(text) })
    }

    @Test func theReadmeSetUpRunsAsPrinted() throws {
        let sandbox = try HelperSandbox()
        let script = try Self.block(containing: "git config --global credential.helper latchkey")
        let output = try sandbox.run("/bin/bash", ["-e", "-c", script])
        #expect(output.status == 0, "\(output.stderr)")
        #expect(
            output.stdout.contains(lines("protocol=https", "host=git.example.com", "username=alice", "password=s3cret"))
        )
        #expect(
            output.stdout.contains(#"{"ServerURL":"registry.example.com","Username":"alice","Secret":"s3cret"}"# + "\n")
        )
        #expect(output.stdout.hasSuffix(#"{"https://registry.example.com":"alice"}"# + "\n"))
        let config = try sandbox.run("/usr/bin/git", ["config", "--global", "credential.helper"])
        #expect(config.stdout == "latchkey\n")
        // The README's docker configuration is the one the helper's --help shows.
        #expect(try Self.readme.contains("```json\n{\n  \"credsStore\": \"latchkey\"\n}\n```"))
    }

    @Test func eachHelperExplainsItself() throws {
        let sandbox = try HelperSandbox()
        let git = try sandbox.run(HelperSandbox.git, ["--help"])
        #expect(git.status == 0 && git.stderr.isEmpty)
        #expect(git.stdout.hasPrefix("usage: git-credential-latchkey <get|store|erase>\n\n"))
        #expect(git.stdout.contains("    git config --global credential.helper latchkey\n"))
        #expect(git.stdout.contains("Exit status: 0 when done"))
        let docker = try sandbox.run(HelperSandbox.docker, ["--help"])
        #expect(docker.status == 0 && docker.stderr.isEmpty)
        #expect(docker.stdout.contains("    { \"credsStore\": \"latchkey\" }\n"))
        let latchkey = try sandbox.run(HelperProcess.product("latchkey"), ["help"])
        #expect(
            latchkey.stdout.contains(
                "\n\nCredential helpers on the same keychain: git-credential-latchkey (`git config --global credential.helper\n"
                    + "latchkey`) and docker-credential-latchkey (`\"credsStore\": \"latchkey\"` in ~/.docker/config.json); each\n"
                    + "explains itself with --help.\n\n`latchkey help <command>`"))
        // The registration commands --help prints are the README's.
        for line in git.stdout.split(separator: "\n") + docker.stdout.split(separator: "\n")
        where line.contains("register-application") {
            #expect(try Self.readme.contains(line.trimmingCharacters(in: .whitespaces)))
        }
    }
}
