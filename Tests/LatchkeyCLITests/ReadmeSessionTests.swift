import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// The README's command-line sessions, pasted into bash verbatim as a reader would — nothing rewritten —
/// with the built programs on the PATH, in a throwaway HOME and with /tmp as it is on every machine (mode
/// 1777, which Latchkey refuses to keep a keychain in directly).
@Suite(.dedicatedThreads) struct ReadmeSessionTests {
    let sandbox = CLISandbox()

    /// The README's ```sh block that contains `marker`.
    func readmeBlock(containing marker: String) throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        return try #require(blocks.first { $0.contains(marker) })
    }

    /// A reader's environment: a home of their own, the built programs first on the PATH, nothing else of
    /// Latchkey's (no XDG directories, no socket path: the defaults under HOME).
    var readerEnvironment: [String: String] {
        [
            "HOME": sandbox.directory.path,
            "PATH": URL(fileURLWithPath: sandbox.binary).deletingLastPathComponent().path + ":/usr/bin:/bin",
            "LANG": "C.UTF-8",
        ]
    }

    @Test func theSessionRunsAsDocumented() throws {
        let script = try readmeBlock(containing: "latchkey create-keychain")
        #expect(!script.contains("/tmp/"), "the session keeps no keychain in /tmp itself")
        // bash -x traces each command as it ran (on standard error), so the test learns which directory
        // mktemp made without changing a word of the session.
        let output = try HelperProcess.run("/bin/bash", ["-x", "-c", script], environment: readerEnvironment)
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "hunter2")
        // -U without -l sets the label to the service, as security does.
        #expect(output.stdout.contains("class: \"genp\"\nattributes:\n    0x00000007 <blob>=\"mail.example.com\"\n"))
        #expect(output.stderr.contains("\npassword: \"correct horse\"\n"))
        #expect(
            output.stderr.contains(
                "\nlatchkey: find-generic-password: The specified item could not be found in the keychain.\n"))
        #expect(output.stdout.contains("\nexit status 44\n"))
        #expect(output.stderr.contains("\npassword has been deleted.\n"))
        #expect(output.stdout.contains("\nok       integrity: 0 rows: 0 verified, 0 damaged"))
        #expect(!output.stdout.contains("\nerror "), "doctor finds nothing wrong")
        #expect(!output.stderr.contains("refused") && !output.stderr.contains("writable"), "\(output.stderr)")
        let removed = try #require(output.stderr.split(separator: "\n").first { $0.hasPrefix("+ rmdir ") }).dropFirst(
            "+ rmdir ".count)
        #expect(removed.hasPrefix("/tmp/tmp."), "mktemp made the directory in /tmp: \(removed)")
        #expect(!FileManager.default.fileExists(atPath: String(removed)), "the session cleans up after itself")
        #expect(output.stderr.contains("\n+ unset LATCHKEY_KEYCHAIN LATCHKEY_PASSPHRASE\n"))
    }

    /// The agent's session, run after the reader has a default keychain (./script/demo made theirs): with
    /// LATCHKEY_PASSPHRASE for the prompts a reader answers on the terminal.
    @Test func theAgentSessionRunsAsDocumented() throws {
        let script = try readmeBlock(containing: "latchkey unlock-keychain ")
        var environment = readerEnvironment
        environment["LATCHKEY_PASSPHRASE"] = CLISandbox.passphrase
        let create = try HelperProcess.run(
            sandbox.binary, ["create-keychain", "--kdf-memory", "19", "--kdf-passes", "2"], environment: environment)
        #expect(create.status == 0, "\(create.stderr)")
        let output = try HelperProcess.run("/bin/bash", ["-e", "-c", script], environment: environment)
        // The agent the session started stops here (by the pid it reports), so none outlives the test.
        defer {
            let keychain = sandbox.directory.path + "/.local/share/latchkey/login.keychain"
            if let client = try? AgentClient.connect(keychainPath: keychain, environment: readerEnvironment),
                let pid = try? client.status().agentProcessIdentifier
            {
                kill(pid_t(pid), SIGTERM)
            } else {
                Issue.record("the session's agent could not be asked for its pid")
            }
        }
        #expect(output.status == 0, "\(output.stderr)")
        let demo = URL(fileURLWithPath: sandbox.binary).deletingLastPathComponent().appendingPathComponent(
            "latchkey-demo"
        ).path
        #expect(
            output.stdout.contains("registered \(demo) as com.example.mail with access groups com.example.mail\n"),
            "\(output.stdout)")
        #expect(
            output.stdout.contains("registered \(sandbox.binary) as latchkey with access groups latchkey, *\n"),
            "\(output.stdout)")
    }
}
