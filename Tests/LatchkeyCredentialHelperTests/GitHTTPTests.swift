import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// A real git remote that asks for HTTP Basic auth (`git http-backend` behind Tests/Tools/git-http-server.py
/// on 127.0.0.1): `git ls-remote` and `git push` get the password from the helper, and a password the server
/// refuses is erased by git's reject.
@Suite struct GitHTTPTests {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Tools/git-http-server.py").path

    /// A bare repository served at `http://127.0.0.1:<port>/repo.git` to alice with password "s3cret".
    final class Server {
        let process: SpawnedProcess
        let port: Int
        let log: String

        init(in sandbox: HelperSandbox) throws {
            let root = sandbox.directory.file("srv")
            try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
            let initialized = try sandbox.run("/usr/bin/git", ["init", "--quiet", "--bare", root + "/repo.git"])
            #expect(initialized.status == 0, "\(initialized.stderr)")
            log = sandbox.directory.file("server.log")
            process = try SpawnedProcess(
                "/usr/bin/python3", [GitHTTPTests.script, root, "alice", "s3cret"],
                environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"], log: log)
            let deadline = Date().addingTimeInterval(20)
            var port: Int?
            while port == nil {
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }) {
                    port = Int(line.dropFirst("listening on ".count))
                }
                guard port != nil || (Date() < deadline && process.isRunning) else { throw CocoaError(.executableLoad) }
                Thread.sleep(forTimeInterval: 0.02)
            }
            self.port = port!
        }

        deinit { process.stop() }

        var url: String { "http://127.0.0.1:\(port)/repo.git" }
        var requests: [String] {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
    }

    func git(_ sandbox: HelperSandbox, _ arguments: [String], in directory: String? = nil) throws
        -> HelperProcess.Output
    {
        try sandbox.run(
            "/usr/bin/git", (directory.map { ["-C", $0] } ?? []) + ["-c", "credential.helper=latchkey"] + arguments)
    }

    @Test func lsRemoteAndPushGetThePasswordFromTheHelper() throws {
        let sandbox = try HelperSandbox()
        let server = try Server(in: sandbox)
        let approved = try sandbox.gitCredential(
            "approve", lines("protocol=http", "host=127.0.0.1:\(server.port)", "username=alice", "password=s3cret"))
        #expect(approved.status == 0, "\(approved.stderr)")

        let listed = try git(sandbox, ["ls-remote", server.url])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(!listed.stderr.contains("askpass"))

        let work = sandbox.directory.file("work")
        #expect(try sandbox.run("/usr/bin/git", ["init", "--quiet", work]).status == 0)
        _ = FileManager.default.createFile(atPath: work + "/README", contents: Data("hello\n".utf8))
        #expect(try sandbox.run("/usr/bin/git", ["-C", work, "add", "README"]).status == 0)
        let committed = try sandbox.run(
            "/usr/bin/git",
            [
                "-C", work, "-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "--quiet", "-m",
                "first",
            ])
        #expect(committed.status == 0, "\(committed.stderr)")
        let pushed = try git(sandbox, ["push", "--quiet", server.url, "HEAD:refs/heads/main"], in: work)
        #expect(pushed.status == 0, "\(pushed.stderr)")
        #expect(!pushed.stderr.contains("askpass"))

        let local = try sandbox.run("/usr/bin/git", ["-C", work, "rev-parse", "HEAD"]).stdout
        let remote = try sandbox.run(
            "/usr/bin/git", ["--git-dir", sandbox.directory.file("srv/repo.git"), "rev-parse", "main"]
        ).stdout
        #expect(!local.isEmpty && local == remote)
        // The server asked (401) and then served the requests that carried the helper's password.
        #expect(server.requests.contains { $0.hasPrefix("GET /repo.git/info/refs?service=git-upload-pack 401") })
        #expect(server.requests.contains { $0.hasPrefix("POST /repo.git/git-receive-pack 200") })
    }

    @Test func aRefusedPasswordIsErasedByGitsReject() throws {
        let sandbox = try HelperSandbox()
        let server = try Server(in: sandbox)
        _ = try sandbox.gitCredential(
            "approve", lines("protocol=http", "host=127.0.0.1:\(server.port)", "username=alice", "password=stale"))
        _ = try sandbox.gitCredential(
            "approve", lines("protocol=http", "host=127.0.0.1:\(server.port + 1)", "username=alice", "password=other"))
        var environment = sandbox.environment
        environment["GIT_ASKPASS"] = nil
        let listed = try sandbox.run(
            "/usr/bin/git", ["-c", "credential.helper=latchkey", "ls-remote", server.url], environment: environment)
        #expect(listed.status == 128)
        #expect(listed.stderr.contains("Authentication failed"))
        // The refused credential went; the one of the other port stays.
        let left = try sandbox.internetPasswords()
        #expect(left.count == 1 && left.first?[.port] == .number(Int64(server.port + 1)))
    }
}
