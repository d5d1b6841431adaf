import Foundation
import Latchkey
import LatchkeyPOSIX
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Bad messages sent to a live agent.
@Suite(.serialized, .dedicatedThreads) struct AgentBadClientTests {
    /// A raw connection, past the agent's greeting; returns the greeting's challenge too.
    func raw(_ sandbox: AgentSandbox) throws -> (AgentStream, [UInt8]) {
        let stream = try #require(AgentStream.connect(path: sandbox.socketPath, timeoutSeconds: 5))
        return (stream, try AgentGreeting.decode(try stream.receive()).challenge)
    }

    /// Reads the error response, then expects the connection to be closed.
    func expectRefusedAndClosed(_ stream: AgentStream, contains text: String) throws {
        let response = try AgentResponse.decode(try stream.receive())
        guard case .failure(let error) = response.outcome else {
            Issue.record("expected a refusal, got \(response.outcome)")
            return
        }
        #expect(error.status == .param)
        #expect(error.detail?.contains(text) == true, "\(error.detail ?? "")")
        #expect(throws: AgentStream.Failure.closed) { _ = try stream.receive() }
    }

    @Test func badClientsAreCutOffAndOthersCarryOn() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        try sandbox.registerClients()
        #expect(try sandbox.client("a", "set", "s", "k", "v") == "ok\n")

        let (garbage, _) = try raw(sandbox)
        try garbage.send(Data("GET / HTTP/1.1\r\n\r\n".utf8))
        try expectRefusedAndClosed(garbage, contains: "not a Latchkey agent message")

        let (early, _) = try raw(sandbox)
        try early.send(AgentRequest.keychain(.status).encoded(id: 1))
        try expectRefusedAndClosed(early, contains: "the first request must be hello")

        let (repeated, challenge) = try raw(sandbox)
        try repeated.send(AgentRequest.hello(keychainPath: sandbox.keychainPath, challenge: challenge).encoded(id: 5))
        #expect(try AgentResponse.decode(try repeated.receive()).outcome == .success(.none))
        try repeated.send(AgentRequest.keychain(.status).encoded(id: 5))
        try expectRefusedAndClosed(repeated, contains: "request 5 after 5")

        let (oversized, _) = try raw(sandbox)
        var header = Data()
        withUnsafeBytes(of: UInt32(200 << 20).bigEndian) { header.append(contentsOf: $0) }
        _ = header.withUnsafeBytes { write(oversized.descriptor.rawValue, $0.baseAddress!, 4) }
        try expectRefusedAndClosed(oversized, contains: "larger than the limit")

        // A client that announces 1,000 bytes, sends 10 and hangs up.
        let (truncated, _) = try raw(sandbox)
        var partial = Data()
        withUnsafeBytes(of: UInt32(1_000).bigEndian) { partial.append(contentsOf: $0) }
        partial.append(Data(repeating: 7, count: 10))
        _ = partial.withUnsafeBytes { write(truncated.descriptor.rawValue, $0.baseAddress!, $0.count) }
        _ = consume truncated

        // A client that connects and says nothing holds only its own thread.
        let (silent, _) = try raw(sandbox)
        #expect(try sandbox.client("b", "get", "s", "k") == "<nil>\n")
        #expect(try sandbox.client("a", "get", "s", "k") == "v\n", "the agent carries on")
        _ = consume silent
    }
}
