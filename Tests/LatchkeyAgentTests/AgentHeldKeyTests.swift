import Foundation
import Latchkey
import LatchkeyProtocol
import LatchkeyTestSupport
import Synchronization
import Testing

@testable import LatchkeyEngine

#if canImport(Glibc)
    import Glibc
#endif

/// Keys the agent holds: made inside `latchkeyd`, used there by the programs it serves, and never seen by
/// them — not in a reply, not in their memory, not in the keychain file — and unusable while the agent is
/// locked.
@Suite(.serialized, .dedicatedThreads) struct AgentHeldKeyTests {
    static let ecdsa = KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256")
    static let ecies = KeyAlgorithm(rawValue: "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV")

    /// The private key the keychain file holds for `reference`, read in this process with the passphrase
    /// (the internal path `useHeldKey` takes): what must appear nowhere else.
    static func storedPrivateKey(_ sandbox: AgentSandbox, _ reference: Data, caller: CallerIdentity) throws -> Data {
        let database = try KeychainDatabase.open(at: sandbox.keychainPath)
        try database.unlock(with: Passphrase(AgentSandbox.passphrase))
        let found = try #require(
            try database.copyMatching(
                ItemQuery(.key, persistentReference: reference, returning: [.data]),
                caller: caller, presence: nil, progress: nil, releasingHeldKeys: true
            ).first)
        let key = try HeldKeyData.privateKey(try #require(found.data), type: .ellipticCurve)
        return try key.externalRepresentation().copiedData().suffix(32)
    }

    /// A started, unlocked agent that serves this test process (registered as "held"), and the service
    /// through it.
    /// A running, unlocked agent with the two test clients registered.
    static func sandboxWithClients() throws -> AgentSandbox {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        try sandbox.registerClients()
        return sandbox
    }

    static func servedAgent() throws -> (AgentSandbox, AgentKeychainService) {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        try sandbox.register(me, appID: "held", groups: ["held"])
        let client = try #require(
            try AgentClient.connect(keychainPath: sandbox.keychainPath, environment: sandbox.environment))
        return (sandbox, AgentKeychainService(client: client))
    }

    /// Which of `needles` occur in the writable memory of process `pid` (read through /proc/<pid>/mem).
    static func memory(of pid: pid_t, contains needles: [Data]) throws -> [Bool] {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        let descriptor = open("/proc/\(pid)/mem", O_RDONLY)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        var found = needles.map { _ in false }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        let overlap = (needles.map(\.count).max() ?? 1) - 1
        var scanned = 0
        var unreadable: [String] = []
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("rw") else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard bounds.count == 2 else { continue }
            var offset = bounds[0]
            while offset < bounds[1] {
                let length = Int(min(UInt64(buffer.count), bounds[1] - offset))
                let read = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, length, off_t(offset)) }
                guard read > 0 else {  // An unreadable region ([vvar] and the like).
                    unreadable.append(
                        "\(fields[0]) \(fields.dropFirst(5).joined(separator: " ")) at \(offset) errno \(errno)")
                    break
                }
                scanned += read
                buffer.withUnsafeBytes { haystack in
                    for (index, needle) in needles.enumerated() where !found[index] {
                        found[index] = needle.withUnsafeBytes {
                            Self.occurs($0, in: UnsafeRawBufferPointer(rebasing: haystack[..<read]))
                        }
                    }
                }
                offset += UInt64(read > overlap && offset + UInt64(read) < bounds[1] ? read - overlap : read)
            }
        }
        #expect(scanned > 1 << 20 && unreadable.isEmpty, "the scan read \(scanned) bytes; unreadable: \(unreadable)")
        return found
    }

    /// Whether `needle` occurs in `haystack` (memchr for its first byte, then memcmp).
    static func occurs(_ needle: UnsafeRawBufferPointer, in haystack: UnsafeRawBufferPointer) -> Bool {
        guard let first = needle.first, let start = haystack.baseAddress, let wanted = needle.baseAddress,
            haystack.count >= needle.count
        else { return false }
        var position = start
        let last = start + (haystack.count - needle.count)
        while position <= last, let hit = memchr(position, Int32(first), last - position + 1) {
            if memcmp(hit, wanted, needle.count) == 0 { return true }
            position = UnsafeRawPointer(hit) + 1
        }
        return false
    }

    static func bytes(_ hex: Substring) -> Data {
        var data = Data()
        var index = hex.startIndex
        while index < hex.endIndex, let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex),
            let byte = UInt8(hex[index..<next], radix: 16)
        {
            data.append(byte)
            index = next
        }
        return data
    }

    @Test func aClientSignsWithAKeyItNeverHolds() throws {
        let sandbox = try Self.sandboxWithClients()
        let trigger = sandbox.directory.file("trigger")
        let log = sandbox.directory.file("client.log")
        let client = try SpawnedProcess(
            HelperProcess.product("latchkey-test-client-a"), ["held-key", "com.example.enclave", trigger],
            environment: sandbox.environment, log: log)
        defer { client.stop(signal: SIGKILL) }
        try waitUntil("the client to sign") { sandbox.file(log).contains("\n") || !client.isRunning }
        let line = sandbox.file(log)
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 9, fields[0] == "public" else {
            Issue.record("the client said: \(line)\nagent: \(sandbox.agentLog)")
            return
        }
        #expect(fields[6...] == ["export", "refused", "-4"])  // errSecUnimplemented
        let publicKey = try AsymmetricKey(
            externalRepresentation: Self.bytes(fields[1]), type: .ellipticCurve, isPrivate: false)
        let message = Data("signed where the key is held".utf8)
        try publicKey.verify(Self.ecdsa, message, signature: Self.bytes(fields[3]))
        try publicKey.verify(Self.ecdsa, message, signature: Self.bytes(fields[5]))

        // The key's private half, as the agent stored it.
        let caller = CallerIdentity(
            applicationIdentifier: "latchkey-test-client-a", accessGroups: ["latchkey-test-client-a"])
        let database = try KeychainDatabase.open(at: sandbox.keychainPath)
        try database.unlock(with: Passphrase(AgentSandbox.passphrase))
        let reference = try #require(
            try database.copyMatching(
                ItemQuery(
                    .key, matching: [.applicationTag: .data(Data("com.example.enclave".utf8))],
                    returning: .persistentReference),
                caller: caller
            ).first
        ).persistentReference
        let scalar = try Self.storedPrivateKey(sandbox, reference, caller: caller)

        // The client's memory holds the public key (the scan's control) and not the private one.
        let found = try Self.memory(of: client.pid, contains: [publicKey.publicKeyData, scalar])
        #expect(found == [true, false])
        // Nor does any file of the keychain hold it in the clear.
        let files = try FileManager.default.contentsOfDirectory(atPath: sandbox.directory.file("data/latchkey"))
        #expect(!files.isEmpty)
        for name in files {
            let contents = try Data(contentsOf: URL(fileURLWithPath: sandbox.directory.file("data/latchkey/" + name)))
            #expect(contents.range(of: scalar) == nil, "\(name)")
        }
        #expect(FileManager.default.createFile(atPath: trigger, contents: Data()))
        try waitUntil("the client to finish") { !client.isRunning }
        #expect(sandbox.file(log).hasSuffix("done\n"))
        #expect(sandbox.agentLog.contains("made a key held by the agent for pid"))
    }

    @Test func everyOperationThroughTheAgentAndALockedAgentRefuses() throws {
        let (sandbox, agent) = try Self.servedAgent()

        let made = try #require(
            try agent.createHeldKey(
                HeldKeyRequest(type: .ellipticCurve, bits: 256, attributes: [.label: .string("held")]),
                returning: [.attributes, .data]))
        let held = try HeldKey(result: made, service: agent)
        #expect(made.attributes[.tokenID] == .string("com.latchkey.agent"))
        var replies: [Data] = [try #require(made.data)]

        let signature = try held.sign(Self.ecdsa, Data("m".utf8))
        try held.publicKey.verify(Self.ecdsa, Data("m".utf8), signature: signature)
        let ciphertext = try held.publicKey.encrypt(Self.ecies, Data("for the agent".utf8))
        let plaintext = try held.decrypt(Self.ecies, ciphertext)
        #expect(plaintext == Data("for the agent".utf8))
        let peer = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let x963 = KeyAlgorithm(rawValue: "algid:keyexchange:ECDH:KDFX963:SHA256")
        let parameters = KeyOperationParameters(requestedSize: 32, sharedInfo: Data("info".utf8))
        let shared = try held.keyExchange(x963, with: peer, parameters: parameters)
        #expect(shared == (try peer.keyExchange(x963, with: held.publicKey, parameters: parameters)))
        let listed = try agent.copyMatching(
            ItemQuery(.key, matching: [.label: .string("held")], returning: [.data, .attributes]))
        #expect(listed.map(\.data) == [held.publicKey.publicKeyData])
        replies += [signature, plaintext, shared] + listed.compactMap(\.data)

        // Errors come back with Apple's statuses, as in process.
        #expect(
            throws: KeychainError.param(
                "algid:sign:RSA:message-PKCS1v15:SHA256 is not supported by this EC private key, 256 bits for sign")
        ) {
            _ = try held.sign(KeyAlgorithm(rawValue: "algid:sign:RSA:message-PKCS1v15:SHA256"), Data())
        }
        // Locked, the agent uses no key; unlocked again, it does.
        try agent.lock()
        #expect(status { _ = try held.sign(Self.ecdsa, Data("m".utf8)) } == .interactionNotAllowed)
        try agent.unlock(with: Passphrase(AgentSandbox.passphrase))
        replies.append(try held.sign(Self.ecdsa, Data("m".utf8)))

        let scalar = try Self.storedPrivateKey(
            sandbox, made.persistentReference,
            caller: CallerIdentity(applicationIdentifier: "held", accessGroups: ["held"]))
        for reply in replies { #expect(reply.range(of: scalar) == nil) }
    }

    @Test func anIdentityOfAHeldKeyIsFoundThroughTheAgentInOneRequest() throws {
        let (sandbox, agent) = try Self.servedAgent()
        let made = try #require(
            try agent.createHeldKey(HeldKeyRequest(type: .ellipticCurve, bits: 256), returning: [.attributes, .data]))
        let der = try CertificateIssuer.issue(publicKeyPoint: try #require(made.data), commonName: "client.example.com")
        _ = try agent.add(NewItem(.certificate, attributes: [.label: .string("client")], data: der), returning: [])
        // A certificate of no key of the keychain's is no identity.
        _ = try agent.add(NewItem(.certificate, data: try CertificateFixtures.der("root-rsa.der")), returning: [])

        let certificates = ItemQuery(.certificate, limit: .all, returning: [.attributes, .data, .persistentReference])
        let keys = ItemQuery(.key, returning: [.attributes, .data, .persistentReference])
        let found = try agent.copyIdentities(certificates: certificates, keys: keys, limit: nil)
        #expect(found.count == 1)
        let identity = try #require(found.first)
        #expect(identity.certificate.data == der)
        #expect(identity.certificate.attributes[.label] == .string("client"))
        #expect(identity.key.persistentReference == made.persistentReference)
        #expect(identity.key.data == made.data, "the public key, never the private one")
        #expect(identity.key.attributes[.tokenID] == .string("com.latchkey.agent"))
        // The same answer as two kinds of search in this process would give.
        let local = LocalKeychainService(
            database: try KeychainDatabase.open(at: sandbox.keychainPath),
            caller: CallerIdentity(applicationIdentifier: "held", accessGroups: ["held"]))
        try local.unlock(with: Passphrase(AgentSandbox.passphrase))
        #expect(try local.copyIdentities(certificates: certificates, keys: keys, limit: nil) == found)
        // Key filters narrow the join; nothing matching is an empty answer.
        #expect(
            try agent.copyIdentities(
                certificates: certificates, keys: ItemQuery(.key, matching: [.label: .string("other")]), limit: nil
            )
            .isEmpty)
        #expect(
            try agent.copyIdentities(
                certificates: ItemQuery(
                    .certificate, matching: [.label: .string("none")], limit: .all,
                    returning: .attributes), keys: keys, limit: nil
            ).isEmpty)
        // Locked, the agent reads no key.
        try agent.lock()
        #expect(
            status { _ = try agent.copyIdentities(certificates: certificates, keys: keys, limit: nil) }
                == .interactionNotAllowed)
    }

    @Test func anEphemeralKeyLivesInTheAgentUntilItLocks() throws {
        let (sandbox, agent) = try Self.servedAgent()
        let made = try #require(
            try agent.createHeldKey(
                HeldKeyRequest(type: .ellipticCurve, bits: 256, isPermanent: false),
                returning: [.attributes, .data]))
        let held = try HeldKey(result: made, service: agent)
        let signature = try held.sign(Self.ecdsa, Data("m".utf8))
        try held.publicKey.verify(Self.ecdsa, Data("m".utf8), signature: signature)
        // Not an item: nothing to find, in the agent or in the file.
        #expect(status { _ = try agent.copyMatching(ItemQuery(.key, limit: .all)) } == .itemNotFound)
        #expect(
            (try Data(contentsOf: URL(fileURLWithPath: sandbox.keychainPath))).range(of: try #require(made.data)) == nil
        )
        // A new connection of the same program still uses it; locking destroys it.
        let again = AgentKeychainService(
            client: try #require(
                try AgentClient.connect(
                    keychainPath: sandbox.keychainPath,
                    environment: sandbox.environment)))
        _ = try again.useHeldKey(made.persistentReference, for: .sign(Self.ecdsa, Data("m".utf8)))
        try agent.lock()
        #expect(status { _ = try held.sign(Self.ecdsa, Data("m".utf8)) } == .interactionNotAllowed)
        try agent.unlock(with: Passphrase(AgentSandbox.passphrase))
        #expect(status { _ = try held.sign(Self.ecdsa, Data("m".utf8)) } == .itemNotFound)
    }

    /// The last handle of an ephemeral key going releases it inside latchkeyd (one request), as Apple frees
    /// a non-permanent key with its `SecKey`.
    @Test func anEphemeralKeyIsReleasedInTheAgentWithItsLastHandle() throws {
        let (sandbox, agent) = try Self.servedAgent()
        let made = try #require(
            try agent.createHeldKey(
                HeldKeyRequest(type: .ellipticCurve, bits: 256, isPermanent: false),
                returning: [.attributes, .data]))
        do {
            let held = try HeldKey(result: made, service: agent)
            _ = try held.sign(Self.ecdsa, Data("m".utf8))
        }
        HeldKeyReleases.waitForPendingReleases()
        let again = AgentKeychainService(
            client: try #require(
                try AgentClient.connect(
                    keychainPath: sandbox.keychainPath,
                    environment: sandbox.environment)))
        #expect(
            status { _ = try again.useHeldKey(made.persistentReference, for: .sign(Self.ecdsa, Data("m".utf8))) }
                == .itemNotFound)
        #expect(status { try again.releaseHeldKey(made.persistentReference) } == .itemNotFound)
        #expect(status { try again.releaseHeldKey(Data(count: 32)) } == .param)
    }

    /// Dropping a key's last handle never waits for the agent: with latchkeyd stopped (SIGSTOP), the handle
    /// goes at once, and its release is sent when the agent runs again. (Released from `deinit`, the thread
    /// dropping the key waited for the stopped agent until the reply timed out, 30 s.)
    @Test func droppingAKeyNeverWaitsForTheAgent() throws {
        let (sandbox, agent) = try Self.servedAgent()
        let made = try #require(
            try agent.createHeldKey(
                HeldKeyRequest(type: .ellipticCurve, bits: 256, isPermanent: false),
                returning: [.attributes, .data]))
        let holder = Mutex<HeldKey?>(try HeldKey(result: made, service: agent))
        _ = try holder.withLock { held throws(KeychainError) in try held?.sign(Self.ecdsa, Data("m".utf8)) }
        let pid = try #require(sandbox.agent?.pid)
        #expect(kill(pid, SIGSTOP) == 0)
        let dropped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            holder.withLock { $0 = nil }  // The last handle goes here.
            dropped.signal()
        }
        // Not a timing: the bound only ends the wait when the drop is stuck behind the stopped agent.
        let returned = dropped.wait(timeout: .now() + 10) == .success
        #expect(kill(pid, SIGCONT) == 0)
        #expect(returned, "dropping the key waited for the stopped agent")
        if !returned { dropped.wait() }
        HeldKeyReleases.waitForPendingReleases()
        let again = AgentKeychainService(
            client: try #require(
                try AgentClient.connect(
                    keychainPath: sandbox.keychainPath,
                    environment: sandbox.environment)))
        #expect(
            status { _ = try again.useHeldKey(made.persistentReference, for: .sign(Self.ecdsa, Data("m".utf8))) }
                == .itemNotFound)
    }

    /// A forked child's copy of a key's handle going releases nothing: the parent still signs with the key.
    @Test func aForkedChildsCopyOfAnEphemeralKeyReleasesNothing() throws {
        let sandbox = try Self.sandboxWithClients()
        #expect(try sandbox.client("a", "fork-ephemeral") == "parent signed\n", "agent: \(sandbox.agentLog)")
    }

    /// Apple's non-permanent keys go with the process that made them: made through the agent, a key is
    /// usable by its program while the process that made it runs, and gone once it has ended.
    @Test func anEphemeralKeyGoesWithTheProcessThatMadeIt() throws {
        let sandbox = try Self.sandboxWithClients()
        let trigger = sandbox.directory.file("trigger")
        let log = sandbox.directory.file("maker.log")
        let maker = try SpawnedProcess(
            HelperProcess.product("latchkey-test-client-a"), ["ephemeral-key", trigger],
            environment: sandbox.environment, log: log)
        defer { maker.stop(signal: SIGKILL) }
        try waitUntil("the client to make its key") { sandbox.file(log).contains("\n") || !maker.isRunning }
        let line = sandbox.file(log)
        guard line.hasPrefix("handle "), line.count == "handle ".count + 64 + 1 else {
            Issue.record("the client said: \(line)\nagent: \(sandbox.agentLog)")
            return
        }
        let handle = String(line.dropFirst("handle ".count).dropLast())
        // Another process of the same program uses it while the maker runs; another program cannot.
        #expect(try sandbox.client("a", "use-key", handle) == "signed\n")
        #expect(try sandbox.client("b", "use-key", handle) == "status -25300\n")
        #expect(FileManager.default.createFile(atPath: trigger, contents: Data()))
        try waitUntil("the maker to end") { !maker.isRunning }
        #expect(sandbox.file(log) == line + "done\n")
        #expect(try sandbox.client("a", "use-key", handle) == "status -25300\n")
    }
}
