import Foundation
import LatchkeyTestSupport

/// One shell job, as a `git push` or an Ansible run is one: a `/bin/sh` in a session of its own that runs
/// the commands it is sent one at a time, each a child in the shell's process group — the process tree one
/// SSH approval covers. (Every program a test runs on its own is a session, so a group, of its own.)
final class ShellJob: @unchecked Sendable {
    // @unchecked: used by one test at a time; `count` changes only in `run`.
    struct Output: Sendable {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    private let shell: SpawnedProcess
    private let directory: String
    private var count = 0

    /// Starts the shell with `environment`; its commands' output goes to files in `directory`.
    init(in directory: String, environment: [String: String]) throws {
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        shell = try SpawnedProcess("/bin/sh", ["-s"], environment: environment, input: true)
    }

    deinit { shell.stop() }

    /// Runs `program` with `arguments` in the job and waits for its end.
    func run(_ program: String, _ arguments: [String], timeout: Double = 60) throws -> Output {
        let index = count
        count += 1
        let file = { (name: String) in "\(self.directory)/\(name).\(index)" }
        let words = ([program] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let line =
            "\(words.joined(separator: " ")) </dev/null >'\(file("out"))' 2>'\(file("err"))'; "
            + "echo $? >'\(file("status")).new' && mv '\(file("status")).new' '\(file("status"))'\n"
        shell.send(Data(line.utf8))
        try waitUntil("\(program) in the shell job", seconds: timeout) {
            FileManager.default.fileExists(atPath: file("status"))
        }
        let text = { (name: String) in (try? String(contentsOfFile: file(name), encoding: .utf8)) ?? "" }
        return Output(
            status: Int32(text("status").trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1,
            stdout: text("out"), stderr: text("err"))
    }
}
