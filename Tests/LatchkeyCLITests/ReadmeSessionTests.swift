import Foundation
import LatchkeyTestSupport
import Testing

/// The README's command-line session, pasted into bash as a reader would, with the built `latchkey` on
/// the PATH (and the throwaway keychain moved into the test's own directory).
@Suite(.dedicatedThreads) struct ReadmeSessionTests {
    let sandbox = CLISandbox()

    func readmeSession() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = readme.components(separatedBy: "```sh\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        return try #require(blocks.first { $0.contains("latchkey create-keychain") })
    }

    @Test func theSessionRunsAsDocumented() throws {
        let keychain = sandbox.directory.file("latchkey-demo.keychain")
        let script = try readmeSession().replacingOccurrences(of: "/tmp/latchkey-demo.keychain", with: keychain)
        var environment = sandbox.environment
        environment["PATH"] = URL(fileURLWithPath: sandbox.binary).deletingLastPathComponent().path + ":/usr/bin:/bin"
        let output = try HelperProcess.run("/bin/bash", ["-c", script], environment: environment)
        #expect(output.status == 0, "\(output.stderr)")
        let lines = output.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.first == "hunter2")
        // -U without -l sets the label to the service, as security does.
        #expect(output.stdout.contains("class: \"genp\"\nattributes:\n    0x00000007 <blob>=\"mail.example.com\"\n"))
        #expect(output.stderr.contains("password: \"correct horse\"\n"))
        #expect(output.stderr.contains("latchkey: find-generic-password: The specified item could not be found in the keychain.\n"))
        #expect(output.stdout.contains("exit status 44\n"))
        #expect(output.stderr.contains("password has been deleted.\n"))
        #expect(output.stdout.contains("ok       integrity: 0 rows: 0 verified, 0 damaged"))
        #expect(!FileManager.default.fileExists(atPath: keychain), "the session cleans up after itself")
    }
}
