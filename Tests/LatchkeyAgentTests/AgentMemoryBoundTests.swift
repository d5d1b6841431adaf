import Foundation
import Latchkey
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The second review's point 10 (issue 30): the first review's flood was bounded in connections but not in
/// memory — 60 connections each sending a 20 MiB frame but for its last byte took the agent from 35 MB to
/// about 825 MB resident. What all of a user's connections can make the agent hold is bounded
/// (`AgentServer.bufferBudget`, docs/LATCHKEY-SECURITY.md): its peak resident memory stays within tens of MB
/// of where it started, and it serves its clients throughout.
@Suite(.serialized, .dedicatedThreads) struct AgentMemoryBoundTests {
    @Test func sixtyNearlyCompleteHugeFramesKeepTheAgentWithinItsBudget() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        try sandbox.registerClients()
        #expect(try sandbox.client("a", "set", "s", "k", "v") == "ok\n")
        let pid = try #require(sandbox.agent?.pid)
        let before = try Self.megabytes("VmHWM", of: pid)
        var frame = Data()
        withUnsafeBytes(of: UInt32(AgentFrame.maximumBytes).bigEndian) { frame.append(contentsOf: $0) }
        frame.append(Data(repeating: 3, count: AgentFrame.maximumBytes - 1))
        var streams: [AgentStream] = []
        for _ in 0..<60 {
            let stream = try #require(AgentStream.connect(path: sandbox.socketPath, timeoutSeconds: 2))
            _ = try AgentGreeting.decode(try stream.receive())
            // Blocks while the agent reads; fails (timeout or reset) once the agent refuses the frame.
            _ = frame.withUnsafeBytes {
                send(stream.descriptor.rawValue, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL))
            }
            streams.append(stream)
        }
        #expect(try sandbox.client("a", "get", "s", "k") == "v\n", "the agent serves its clients throughout")
        let peak = try Self.megabytes("VmHWM", of: pid)
        #expect(peak - before <= 64, "the agent's peak resident memory grew from \(before) MB to \(peak) MB")
        streams.removeAll()
    }

    /// A `/proc/<pid>/status` figure (`VmRSS`, `VmHWM`: the peak), in MB.
    static func megabytes(_ field: String, of pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(field + ":") })
        let kilobytes = try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kilobytes >> 10
    }
}
