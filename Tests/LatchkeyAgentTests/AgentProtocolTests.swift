import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The agent's protocol: every message round-trips; anything malformed, truncated, oversized or out of
/// order is refused without a crash, and a live agent closes that connection and carries on.
@Suite(.dedicatedThreads) struct AgentProtocolTests {
    static let requests: [AgentRequest] = [
        .hello(keychainPath: "/home/a/.local/share/latchkey/login.keychain", challenge: Data(repeating: 3, count: 16)), .status, .unlock(passphrase: Array("pw".utf8)),
        .lock, .add(["class": .string("genp"), "v_Data": .data(Data([1, 2])), "sync": .boolean(true)]),
        .copyMatching(["class": .string("genp"), "m_Limit": .integer(5), "cdat": .date(Date(timeIntervalSinceReferenceDate: 1))]),
        .update(["class": .string("inet"), "port": .integer(443)], ["labl": .string("x")]),
        .delete(["class": .string("genp"), "list": .array([.null, .double(1.5), .dictionary(["k": .string("v")])])]),
        .upsert(["class": .string("genp")], ["v_Data": .data(Data())]),
        .register(passphrase: [1, 2, 3], executablePath: "/usr/bin/app", applicationIdentifier: "com.example", accessGroups: ["a", "b"]),
        .unregister(passphrase: [4], executablePath: "/usr/bin/app"), .listRegistrations,
        .updateSettings(passphrase: [5], autoLockAfterSeconds: 300, lockOnSleep: true),
        .updateSettings(passphrase: [5], autoLockAfterSeconds: nil, lockOnSleep: false),
    ]

    @Test(arguments: requests.indices)
    func requestsRoundTrip(_ index: Int) throws {
        let encoded = Self.requests[index].encoded(id: 42)
        let (id, decoded) = try AgentRequest.decode(encoded)
        #expect(id == 42)
        #expect(decoded.encoded(id: 42) == encoded)
        // Every strict prefix is refused (truncation), never crashes.
        for length in 0..<encoded.count {
            #expect(throws: AgentProtocolError.self) { _ = try AgentRequest.decode(encoded.prefix(length)) }
        }
        // A trailing byte is refused too.
        #expect(throws: AgentProtocolError.malformed("trailing bytes after the request")) {
            _ = try AgentRequest.decode(encoded + Data([0]))
        }
    }

    @Test func responsesRoundTrip() throws {
        let response = AgentResponse(id: 7, status: .itemNotFound, detail: "nothing", value: .array([.string("a"), .integer(-3)]))
        #expect(try AgentResponse.decode(response.encoded()) == response)
        #expect(try AgentResponse.decode(AgentResponse(id: 8, status: .success).encoded()).detail == nil)
    }

    @Test func randomMutationsNeverCrashTheDecoder() throws {
        var generator = TestSeed.generator("AgentProtocolTests.mutations")
        var refused = 0, accepted = 0
        for round in 0..<20_000 {
            var message = Self.requests[round % Self.requests.count].encoded(id: UInt32(round))
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let position = Int.random(in: 0..<message.count, using: &generator)
                message[position] = UInt8.random(in: 0...255, using: &generator)
            }
            guard let (id, request) = try? AgentRequest.decode(message) else {  // Refused: the expected outcome.
                refused += 1
                continue
            }
            accepted += 1
            // What the decoder accepts, it encodes canonically: encoding again changes nothing.
            let encoded = request.encoded(id: id)
            let (againID, again) = try AgentRequest.decode(encoded)
            #expect(againID == id && again.encoded(id: id) == encoded, "round \(round)")
        }
        print("AgentProtocolTests: 20000 mutated requests, \(refused) refused, \(accepted) decoded and re-encoded canonically")
        #expect(refused + accepted == 20_000)
        #expect(refused > 0, "a mutation the decoder should refuse (a wrong magic byte) appears in any 20,000")
    }

    @Test func deepNestingAndHugeCountsAreRefused() {
        var nested = WireValue.null
        for _ in 0..<20 { nested = .array([nested]) }
        let message = AgentRequest.add(["deep": nested]).encoded(id: 1)
        #expect(throws: AgentProtocolError.malformed("values nested too deeply")) { _ = try AgentRequest.decode(message) }
        // A dictionary claiming four billion entries in a few bytes.
        var lying = AgentRequest.add([:]).encoded(id: 1)
        lying.removeLast(4)
        lying.append(contentsOf: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: AgentProtocolError.self) { _ = try AgentRequest.decode(lying) }
    }

    @Test func oversizedFramesAreRefusedBeforeAllocating() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let writer = AgentStream(descriptor: fds[0])
        let reader = AgentStream(descriptor: fds[1])
        var header = Data()
        withUnsafeBytes(of: UInt32(1 << 30).bigEndian) { header.append(contentsOf: $0) }
        try writer.send(Data())  // A valid empty frame first.
        #expect(try reader.receive() == Data())
        _ = header.withUnsafeBytes { write(fds[0], $0.baseAddress!, 4) }
        #expect(throws: AgentStream.Failure.oversized(1 << 30)) { _ = try reader.receive() }
    }
}

/// Bad messages sent to a live agent.
@Suite(.serialized, .dedicatedThreads) struct AgentBadClientTests {
    /// A raw connection, past the agent's greeting; returns the greeting's challenge too.
    func raw(_ sandbox: AgentSandbox) throws -> (AgentStream, Data) {
        let stream = try #require(AgentStream.connect(path: sandbox.socketPath, timeoutSeconds: 5))
        return (stream, try AgentGreeting.decode(try stream.receive()).challenge)
    }

    /// Reads the error response, then expects the connection to be closed.
    func expectRefusedAndClosed(_ stream: AgentStream, contains text: String) throws {
        let response = try AgentResponse.decode(try stream.receive())
        #expect(response.status == .param)
        #expect(response.detail?.contains(text) == true, "\(response.detail ?? "")")
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
        try early.send(AgentRequest.status.encoded(id: 1))
        try expectRefusedAndClosed(early, contains: "the first request must be hello")

        let (repeated, challenge) = try raw(sandbox)
        try repeated.send(AgentRequest.hello(keychainPath: sandbox.keychainPath, challenge: challenge).encoded(id: 5))
        #expect(try AgentResponse.decode(try repeated.receive()).status == .success)
        try repeated.send(AgentRequest.status.encoded(id: 5))
        try expectRefusedAndClosed(repeated, contains: "request 5 after 5")

        let (oversized, _) = try raw(sandbox)
        var header = Data()
        withUnsafeBytes(of: UInt32(200 << 20).bigEndian) { header.append(contentsOf: $0) }
        _ = header.withUnsafeBytes { write(oversized.descriptor, $0.baseAddress!, 4) }
        try expectRefusedAndClosed(oversized, contains: "larger than the limit")

        // A client that announces 1,000 bytes, sends 10 and hangs up.
        let (truncated, _) = try raw(sandbox)
        var partial = Data()
        withUnsafeBytes(of: UInt32(1_000).bigEndian) { partial.append(contentsOf: $0) }
        partial.append(Data(repeating: 7, count: 10))
        _ = partial.withUnsafeBytes { write(truncated.descriptor, $0.baseAddress!, $0.count) }
        _ = consume truncated

        // A client that connects and says nothing holds only its own thread.
        let (silent, _) = try raw(sandbox)
        #expect(try sandbox.client("b", "get", "s", "k") == "<nil>\n")
        #expect(try sandbox.client("a", "get", "s", "k") == "v\n", "the agent carries on")
        _ = consume silent
    }
}
