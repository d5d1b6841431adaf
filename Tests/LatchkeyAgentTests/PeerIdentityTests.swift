import Foundation
import Glibc
import LatchkeyCaller
import LatchkeyPOSIX
import LatchkeyTestSupport
import Testing

@testable import LatchkeyAgent

/// The check the agent makes before it serves a request: the sender is still the process it identified at
/// connection (its pidfd), running the very executable it identified (looked at through the `/proc/<pid>`
/// directory opened with the pidfd). A process that runs another program after connecting, or is gone, is
/// told apart.
@Suite struct PeerIdentityTests {
    /// A python3 that waits for a line on its standard input, then runs `/bin/sleep`.
    static func startExecer() throws -> SpawnedProcess {
        try SpawnedProcess(
            "/usr/bin/python3",
            ["-c", "import os, sys; sys.stdin.readline(); os.execv('/bin/sleep', ['sleep', '30'])"],
            environment: ["PATH": "/usr/bin:/bin"], input: true)
    }

    @Test func aProcessThatRunsAnotherProgramAfterConnectingIsToldApart() throws {
        let process = try Self.startExecer()
        defer { process.stop(signal: SIGKILL) }
        let pid = process.pid
        // Identified once python3 runs (posix_spawn may return before the child has exec'd).
        var identity = PeerIdentity.identify(pid: pid, uid: getuid(), digests: DigestCache())
        for _ in 0..<500 where !(identity.executablePath ?? "").contains("python3") {
            Thread.sleep(forTimeInterval: 0.01)
            identity = PeerIdentity.identify(pid: pid, uid: getuid(), digests: DigestCache())
        }
        #expect(identity.executablePath?.contains("python3") == true)
        #expect(identity.handle != nil)
        let sender = UnixSocket.Credentials(pid: pid, uid: getuid(), gid: getgid())
        #expect(identity.mismatch(sender: sender, digests: DigestCache()) == nil)
        // Another sender (another pid) is refused whatever it runs.
        let stranger = UnixSocket.Credentials(pid: getpid(), uid: getuid(), gid: getgid())
        #expect(
            identity.mismatch(sender: stranger, digests: DigestCache())
                == "a message came from pid \(getpid()) (uid \(getuid())), not from pid \(pid), which connected")

        process.send(Data("go\n".utf8))
        var verdict: String?
        for _ in 0..<500 {
            verdict = identity.mismatch(sender: sender, digests: DigestCache())
            if verdict != nil { break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(verdict == "pid \(pid) now runs /usr/bin/sleep, not the program that connected")

        process.stop(signal: SIGKILL)
        #expect(
            identity.mismatch(sender: sender, digests: DigestCache())
                == "pid \(pid) is no longer the process that connected")
    }

    @Test func theHandleLooksAtTheExecutableThroughItsProcessDirectory() throws {
        let handle = try #require(ProcessHandle(pid: getpid()))
        let byPath = try #require(FileStatus.of(path: "/proc/self/exe", followingLinks: true))
        let throughHandle = try #require(handle.executableStatus)
        #expect(FileIdentity(throughHandle) == FileIdentity(byPath))
        #expect(!handle.hasExited)
    }
}
