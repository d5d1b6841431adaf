import Foundation
import Glibc
import LatchkeyPOSIX
import LatchkeyTestSupport
import Testing

/// `Spawn.start`: what the child gets as its standard streams, and how its end is reported.
@Suite struct SpawnTests {
    @Test func standardOutputAndErrorBothReachTheOutputFile() throws {
        let directory = TemporaryDirectory()
        let log = directory.file("child.log")
        let pid = try Spawn.start(
            "/bin/sh", ["-c", "echo out; echo err >&2; exit 3"], environment: ["PATH": "/usr/bin:/bin"],
            options: Spawn.Options(outputPath: log))
        #expect(Spawn.wait(pid) == .exited(3))
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "out\nerr\n")
        let mode = try FileManager.default.attributesOfItem(atPath: log)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func withAStandardOutputPipeStandardErrorGoesToTheFile() throws {
        let directory = TemporaryDirectory()
        let log = directory.file("errors.log")
        let pipe = try Pipes.make()
        var options = Spawn.Options()
        options.standardOutput = .descriptor(pipe.write)
        options.standardError = .appending(log)
        let pid = try Spawn.start(
            "/bin/sh", ["-c", "echo to-pipe; echo to-file >&2"], environment: ["PATH": "/usr/bin:/bin"],
            options: options)
        pipe.write.close()
        #expect(Spawn.wait(pid) == .exited(0))
        let read = FileHandle(fileDescriptor: pipe.read.rawValue, closeOnDealloc: true).readDataToEndOfFile()
        #expect(String(decoding: read, as: UTF8.self) == "to-pipe\n")
        #expect(try String(contentsOfFile: log, encoding: .utf8) == "to-file\n")
    }

    @Test func inheritedDescriptorsAreClosedWhenAsked() throws {
        // A descriptor without close-on-exec, as a C library's socket() makes one.
        var ends: [Int32] = [-1, -1]
        #expect(Glibc.pipe(&ends) == 0)
        defer { ends.forEach { FileDescriptor(rawValue: $0).close() } }
        let probe = ["-c", "test -e /proc/self/fd/\(ends[1])"]
        #expect(Spawn.wait(try Spawn.start("/bin/sh", probe, environment: ["PATH": "/usr/bin:/bin"])) == .exited(0))
        let closing = Spawn.Options(closeInheritedDescriptors: true)
        #expect(
            Spawn.wait(try Spawn.start("/bin/sh", probe, environment: ["PATH": "/usr/bin:/bin"], options: closing))
                == .exited(1))
    }

    @Test func theChildStartsInTheDirectoryAsked() throws {
        let directory = TemporaryDirectory()
        let log = directory.file("pwd.log")
        var options = Spawn.Options(outputPath: log)
        options.currentDirectory = directory.path
        #expect(
            Spawn.wait(
                try Spawn.start("/bin/sh", ["-c", "pwd -P"], environment: ["PATH": "/usr/bin:/bin"], options: options))
                == .exited(0))
        let resolved = URL(fileURLWithPath: directory.path).resolvingSymlinksInPath().path
        #expect(try String(contentsOfFile: log, encoding: .utf8) == resolved + "\n")
        options.currentDirectory = directory.file("missing")
        #expect(throws: Errno.self) {
            _ = try Spawn.start("/bin/sh", ["-c", "true"], environment: [:], options: options)
        }
    }

    @Test func aSignalledChildIsReportedAsSuch() throws {
        let pid = try Spawn.start("/bin/sh", ["-c", "kill -TERM $$"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(Spawn.wait(pid) == .signaled(SIGTERM))
    }

    @Test func aMissingProgramIsAnError() {
        #expect(throws: Errno.self) {
            _ = try Spawn.start("/nonexistent/program", [], environment: [:])
        }
    }
}
