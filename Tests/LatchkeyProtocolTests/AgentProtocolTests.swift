import Foundation
import Latchkey
import LatchkeyPKI
import LatchkeyPOSIX
import LatchkeyProtocol
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The agent's protocol: every message round-trips; anything malformed, truncated, oversized or out of
/// order is refused without a crash (a live agent's handling of such messages: AgentBadClientTests).
@Suite(.dedicatedThreads) struct AgentProtocolTests {
    static let item = NewItem(
        .genericPassword, attributes: [.service: .string("mail"), .synchronizable: .bool(true)],
        data: Data([1, 2]))
    static let query = ItemQuery(
        .genericPassword, matching: [.creationDate: .date(Date(timeIntervalSinceReferenceDate: 1))],
        synchronizable: .any, persistentReference: Data(repeating: 1, count: 32), limit: .count(5),
        returning: [.data, .attributes])
    static let requests: [AgentRequest] =
        [
            .hello(
                keychainPath: "/home/a/.local/share/latchkey/login.keychain", challenge: Array(repeating: 3, count: 16)),
            .unlockUnattended, .unlockDerived(derivedKey),
        ] + keychainRequests.map { .keychain($0) }

    /// A derived key's bytes: a KDF record (Argon2id, 3 passes, 64 MiB, a salt) and an output.
    static let derivedKeyBytes: [UInt8] =
        [1] + [3, 0, 0, 0, 0, 0, 0, 0] + [0, 0, 0, 4, 0, 0, 0, 0] + Array(repeating: 0x5a, count: 16)
        + Array(repeating: 0xc3, count: 32)
    static let derivedKey: DerivedUnlockKey = {
        guard let key = derivedKeyBytes.withUnsafeBytes({ DerivedUnlockKey(encoded: $0) }) else {
            fatalError("the derived key's bytes do not decode")
        }
        return key
    }()

    @Test func aDerivedKeyIsExactlyARecordAndItsOutput() throws {
        let encoded = AgentRequest.unlockDerived(Self.derivedKey).encoded(id: 5)
        #expect(encoded.suffix(65) == Data(Self.derivedKeyBytes))
        let refusal = AgentProtocolError.malformed(
            "a derived key is 65 bytes: a key derivation record and its output")
        var unknownAlgorithm = encoded
        unknownAlgorithm[unknownAlgorithm.count - 65] = 7
        #expect(throws: refusal) { _ = try AgentRequest.decode(unknownAlgorithm) }
        // A field one byte short (its length says 64, and the message ends there).
        var short = Data(encoded.prefix(encoded.count - 69))
        short.append(contentsOf: [64, 0, 0, 0])
        short.append(Data(Self.derivedKeyBytes.prefix(64)))
        #expect(throws: refusal) { _ = try AgentRequest.decode(short) }
        #expect(Array(Self.derivedKeyBytes.prefix(64)).withUnsafeBytes { DerivedUnlockKey(encoded: $0) } == nil)
    }
    static let keychainRequests: [KeychainRequest] = [
        .status, .unlock(Passphrase("pw")), .lock, .add(item, returning: [.persistentReference]), .copyMatching(query),
        .update(
            ItemQuery(.internetPassword, matching: [.port: .number(443)]),
            ItemChanges(attributes: [.label: .string("x")])),
        .delete(ItemQuery(.genericPassword, limit: .all)),
        .copyMatching(
            ItemQuery(
                .certificate, limit: .all, returning: .reference,
                certificateMatch: CertificateMatch(
                    issuers: [Data([0x31, 0x00]), Data()], validOn: Date(timeIntervalSinceReferenceDate: 123.5),
                    subjectContains: "exämple",
                    emailAddressIfPresent: "a@b", caseInsensitive: true, trustedOnly: true,
                    policy: .ssl(server: true, hostname: "www.exämple.org")))),
        .copyMatching(ItemQuery(.certificate, certificateMatch: CertificateMatch(policy: .basicX509))),
        .copyMatching(
            ItemQuery(
                .identity,
                certificateMatch: CertificateMatch(
                    subjectStartsWith: "Developer ID Application: ", subjectEndsWith: "(ＴＥＡＭ)", subjectWholeString: "",
                    diacriticInsensitive: true,
                    widthInsensitive: true))),
        .copyMatching(
            ItemQuery(.certificate, certificateMatch: CertificateMatch(subjectEndsWith: "é", widthInsensitive: true))),
        .copyMatching(
            ItemQuery(.certificate, certificateMatch: CertificateMatch(policy: .ssl(server: false, hostname: nil)))),
        .addOrUpdate(NewItem(.genericPassword, data: Data())),
        .register(
            executablePath: "/usr/bin/app", applicationIdentifier: "com.example", accessGroups: ["a", "b"],
            passphrase: Passphrase(bytes: [1, 2, 3])),
        .unregister(executablePath: "/usr/bin/app", passphrase: Passphrase(bytes: [4])), .listRegistrations,
        .updateSettings(
            KeychainSettings(autoLockAfterSeconds: 300, lockOnSleep: true), passphrase: Passphrase(bytes: [5])),
        .updateSettings(
            KeychainSettings(autoLockAfterSeconds: nil, lockOnSleep: false), passphrase: Passphrase(bytes: [5])),
        .settings,
        .copyIdentities(
            certificates: ItemQuery(
                .certificate, matching: [.label: .string("web")], limit: .all, returning: [.attributes, .data]),
            keys: ItemQuery(.key, matching: [.type: .number(73)], returning: [.attributes, .persistentReference]),
            limit: nil),
        .copyIdentities(
            certificates: ItemQuery(.certificate, limit: .all, returning: .attributes), keys: ItemQuery(.key), limit: 3),
        .createHeldKey(
            HeldKeyRequest(type: .ellipticCurve, bits: 256, attributes: [.label: .string("k")]), returning: [.data]),
        .createHeldKey(HeldKeyRequest(type: .rsa, bits: 2048, isPermanent: false), returning: []),
        .releaseHeldKey(reference: Data("lke1".utf8) + Data(repeating: 7, count: 28)),
        .releaseHeldKey(reference: Data()),
        .copyMatching(hostQuery),
        .locate(ItemQuery(.genericPassword, matching: [.service: .string("org.freedesktop.secrets")], limit: .all)),
        .importHeldKey(
            heldKey, attributes: [.label: .string("ssh"), .accessGroup: .string("com.latchkey.ssh")],
            returning: [.persistentReference]),
        .accessLists(reference: nil), .accessLists(reference: Data(repeating: 2, count: 32)),
        .grantAccess(
            .executable(path: "/usr/bin/tool", digest: Data(repeating: 9, count: 32)),
            reference: Data(repeating: 2, count: 32), passphrase: Passphrase(bytes: [6])),
        .grantAccess(.sandbox(appID: "org.example.App"), reference: Data([1]), passphrase: Passphrase(bytes: [6])),
        .revokeAccess(.confined(label: "apparmor:tool"), reference: Data([1]), passphrase: Passphrase(bytes: [7])),
    ]

    /// A private key to hold (an SSH key `ssh-add` hands over): made once.
    static let heldKey: AsymmetricKey = {
        do {
            return try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        } catch {
            fatalError("P-256 generation failed: \(error)")
        }
    }()

    /// A search of internet passwords by host or subdomain (`kSecMatchHostOrSubdomainOfHost`).
    static var hostQuery: ItemQuery {
        var query = ItemQuery(.internetPassword, limit: .all, returning: .attributes)
        query.hostOrSubdomainOf = "example.com"
        return query
    }

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
        let result = ItemResult(
            itemClass: .genericPassword, attributes: [.account: .string("a"), .port: .number(-3)], data: nil,
            persistentReference: Data([7]))
        let status = KeychainServiceStatus(
            lockState: .unlocked, keychainPath: "/k", agentProcessIdentifier: 9,
            caller: .refused("a reason"))
        let responses = [
            AgentResponse(id: 7, operation: .copyMatching, failure: KeychainError(.itemNotFound, "nothing")),
            AgentResponse(id: 8, operation: .copyMatching, outcome: .success(.items([result]))),
            AgentResponse(id: 9, operation: .add, outcome: .success(.item(nil))),
            AgentResponse(id: 10, operation: .status, outcome: .success(.status(status))),
            AgentResponse(
                id: 11, operation: .settings, outcome: .success(.settings(KeychainSettings(autoLockAfterSeconds: 5)))),
            AgentResponse(id: 12, operation: .lock, outcome: .success(.none)),
            AgentResponse(
                id: 13, operation: .copyIdentities,
                outcome: .success(
                    .identities([
                        IdentityMatch(
                            certificate: result,
                            key: ItemResult(
                                itemClass: .key, attributes: [.keyClass: .number(1)], data: Data([4]),
                                persistentReference: Data([8])))
                    ]))),
            AgentResponse(id: 14, operation: .copyIdentities, outcome: .success(.identities([]))),
            AgentResponse(
                id: 15, operation: .locate,
                outcome: .success(
                    .located([
                        LocatedItem(reference: Data([1, 2]), isAvailable: true),
                        LocatedItem(reference: Data([3]), isAvailable: false),
                    ]))),
            AgentResponse(id: 16, operation: .locate, outcome: .success(.located([]))),
            AgentResponse(
                id: 17, operation: .accessLists,
                outcome: .success(
                    .accessLists([
                        ItemAccessList(
                            reference: Data([1, 2]), itemClass: .genericPassword, summary: "service=mail",
                            entries: [
                                AccessListEntry(
                                    program: .executable(path: "/usr/bin/tool", digest: Data(repeating: 9, count: 32)),
                                    added: Date(timeIntervalSince1970: 1_700_000_000), origin: .answer),
                                AccessListEntry(
                                    program: .sandbox(appID: "org.example.App"),
                                    added: Date(timeIntervalSince1970: 1_700_000_001), origin: .command),
                            ]),
                        ItemAccessList(
                            reference: Data([3]), itemClass: .internetPassword, summary: nil,
                            entries: [
                                AccessListEntry(
                                    program: .confined(label: "selinux:tool_t"),
                                    added: Date(timeIntervalSince1970: 5), origin: .backup)
                            ]),
                    ]))),
            AgentResponse(id: 18, operation: .grantAccess, outcome: .success(.flag(true))),
        ]
        for response in responses {
            #expect(try AgentResponse.decode(response.encoded()) == response)
        }
        #expect(
            try AgentResponse.decode(AgentResponse(id: 8, operation: .lock, failure: KeychainError(.io)).encoded())
                == AgentResponse(id: 8, operation: .lock, failure: KeychainError(.io)), "no detail stays no detail")
        // A value of the wrong shape for its operation is refused.
        var wrong = AgentResponse(id: 13, operation: .update, outcome: .success(.count(1))).encoded()
        wrong[7] = AgentOperation.copyMatching.rawValue
        #expect(throws: AgentProtocolError.self) { _ = try AgentResponse.decode(wrong) }
    }

    @Test func randomMutationsNeverCrashTheDecoder() throws {
        var generator = TestSeed.generator("AgentProtocolTests.mutations")
        var refused = 0
        var accepted = 0
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
        print(
            "AgentProtocolTests: 20000 mutated requests, \(refused) refused, \(accepted) decoded and re-encoded canonically"
        )
        #expect(refused + accepted == 20_000)
        #expect(refused > 0, "a mutation the decoder should refuse (a wrong magic byte) appears in any 20,000")
    }

    @Test func malformedAttributesAndHugeCountsAreRefused() {
        // Attributes that are not the attribute blob's encoding.
        var message = AgentRequest.keychain(
            .addOrUpdate(NewItem(.genericPassword, attributes: [.account: .string("a")]))
        ).encoded(id: 1)
        let blob = message.range(of: Data([1, 1, 0, 0, 0]))!  // format 1, one attribute
        message[blob.lowerBound] = 9
        #expect(throws: AgentProtocolError.malformed("malformed attributes")) { _ = try AgentRequest.decode(message) }
        // A list claiming four billion entries in a few bytes.
        var lying = AgentRequest.keychain(
            .register(
                executablePath: "/p", applicationIdentifier: "a", accessGroups: [], passphrase: Passphrase(bytes: []))
        ).encoded(id: 1)
        lying.removeLast(4)
        lying.append(contentsOf: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(throws: AgentProtocolError.malformed("a count larger than its message")) {
            _ = try AgentRequest.decode(lying)
        }
        // An unknown operation, an unknown item class.
        var unknown = AgentRequest.keychain(.status).encoded(id: 1)
        unknown[7] = 200
        #expect(throws: AgentProtocolError.malformed("unknown operation 200")) { _ = try AgentRequest.decode(unknown) }
    }

    @Test func oversizedFramesAreRefusedBeforeAllocating() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let writer = AgentStream(descriptor: FileDescriptor(rawValue: fds[0]))
        let reader = AgentStream(descriptor: FileDescriptor(rawValue: fds[1]))
        var header = Data()
        withUnsafeBytes(of: UInt32(1 << 30).bigEndian) { header.append(contentsOf: $0) }
        try writer.send(Data())  // A valid empty frame first.
        #expect(try reader.receive() == Data())
        _ = header.withUnsafeBytes { write(writer.descriptor.rawValue, $0.baseAddress!, 4) }
        #expect(throws: AgentStream.Failure.oversized(1 << 30)) { _ = try reader.receive() }
    }

    /// A frame far larger than the socket's buffer goes out in several writes, its header and body in order,
    /// and comes back whole; frames before and after it are untouched.
    @Test func aFrameLargerThanTheSocketBufferArrivesWhole() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let writer = AgentStream(descriptor: FileDescriptor(rawValue: fds[0]))
        let reader = AgentStream(descriptor: FileDescriptor(rawValue: fds[1]))
        // The streams own the descriptors and close them when released: no close here (a second close could
        // end a descriptor another test's thread has opened under the same number meanwhile).
        let big = Data((0..<(5 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) })
        let sender = Thread {
            // A failure shows as the reader's mismatch below.
            try? writer.send(Data("before".utf8))
            try? writer.send(big)
            try? writer.send(Data())
            try? writer.send(Data("after".utf8))
        }
        sender.start()
        #expect(try reader.receive() == Data("before".utf8))
        let received = try reader.receive()
        #expect(received.count == big.count)
        #expect(received == big)
        #expect(try reader.receive() == Data())
        #expect(try reader.receive() == Data("after".utf8))
    }

    /// Polling before sleeping changes when a receive returns, never what it returns: a frame that is
    /// there, one that comes after the polling ran out, and a closed connection.
    @Test func aPollingReceiveGetsWhatASleepingOneGets() throws {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let writer = AgentStream(descriptor: FileDescriptor(rawValue: fds[0]))
        let reader = AgentStream(descriptor: FileDescriptor(rawValue: fds[1]))
        reader.spinNanoseconds = 200_000
        #expect(!reader.descriptor.spinUntilReadable(nanoseconds: 200_000))  // Nothing came: false, after the time.
        try writer.send(Data("first".utf8))
        #expect(reader.descriptor.spinUntilReadable(nanoseconds: 200_000))
        #expect(try reader.receive() == Data("first".utf8))
        let late = Thread {
            Thread.sleep(forTimeInterval: 0.05)  // Long after the reader stopped polling and went to sleep.
            try? writer.send(Data("second".utf8))  // A failure shows as the reader's error below.
            writer.shutDown()
        }
        late.start()
        #expect(try reader.receive() == Data("second".utf8))
        #expect(throws: AgentStream.Failure.closed) { _ = try reader.receive() }
    }
}
