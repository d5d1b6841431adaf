import Foundation
import Latchkey
import LatchkeyCLI
import LatchkeyEngine
import LatchkeyPKI
import LatchkeyProtocol
import LatchkeySSH

/// The committed seed corpus, regenerated with `latchkey-fuzz --write-seeds Fuzz/corpus`: well-formed
/// inputs for each target, so the fuzzer starts past the first checks of every decoder.
enum Seeds {
    static func write(to directory: String) throws {
        let corpus: [String: [Data]] = [
            "query": query(), "backup": try backup(), "snapshot": try snapshot(), "cli": commandLine(),
            "agent": agent(),
            "certificate": try certificates(), "pkcs12": try fixtures(ending: ".p12"), "pem": try pemKeys(),
            "ssh": try ssh(), "tpm-policy": try tpmPolicies(),
        ]
        for (target, inputs) in corpus {
            let folder = directory + "/" + target
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            for (index, input) in inputs.enumerated() {
                try input.write(to: URL(fileURLWithPath: folder + String(format: "/seed-%03d", index)))
            }
        }
    }

    /// The committed test certificates (run from the repository's root).
    static func certificates() throws -> [Data] { try fixtures(ending: ".der") }

    /// PEM keys: public and encrypted private, EC and RSA, made here (the fuzzer's passphrase opens them).
    static func pemKeys() throws -> [Data] {
        var seeds: [Data] = []
        for (type, bits) in [(KeyType.ellipticCurve, 256), (.ellipticCurve, 384), (.rsa, 1024)] {
            let key = try AsymmetricKey.generate(type, bits: bits)
            seeds.append(Data(try key.publicKeyPEM().utf8))
            seeds.append(try key.encryptedPrivateKeyPEM(passphrase: "fixture p12").copiedData())
        }
        return seeds
    }

    /// Signed PCR policy files (`latchkey tpm sign-policy`): one PCR, several, and the values of a fresh TPM.
    static func tpmPolicies() throws -> [Data] {
        let key = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let sets: [[Int: Data]] = [
            [7: Data(repeating: 0, count: 32)],
            [7: Data(repeating: 0xa5, count: 32), 11: Data((0..<32).map { UInt8($0) })],
            [
                0: Data(repeating: 1, count: 32), 16: Data(repeating: 0, count: 32),
                23: Data(repeating: 0xff, count: 32),
            ],
        ]
        return try sets.map { values in try TPMSignedPolicy.sign(pcrValues: values, key: key).fileContents }
    }

    /// The SSH agent's requests as ssh-add and ssh send them — identities, a sign request, adds of Ed25519 and
    /// ECDSA keys (one with a lifetime, confirmation and a destination constraint), removal, lock, unlock and
    /// the query extension — and the keys' public blobs.
    static func ssh() throws -> [Data] {
        func message(_ type: UInt8, _ body: (inout SSHWriter) -> Void = { _ in }) -> Data {
            var writer = SSHWriter()
            writer.byte(type)
            body(&writer)
            return writer.data
        }
        let ed25519 = try AsymmetricKey.generate(.ed25519, bits: 256)
        let ecdsa = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let ed25519Seed = try ed25519.externalRepresentation().copiedData()
        let ecdsaPrivate = try ecdsa.externalRepresentation().copiedData()
        let blobs = [SSHPublicKey(ed25519).blob, SSHPublicKey(ecdsa).blob]
        let addEd25519 = message(17) { writer in
            writer.string("ssh-ed25519")
            writer.string(ed25519.publicKeyData)
            writer.string(ed25519Seed + ed25519.publicKeyData)
            writer.string("laptop")
        }
        let addECDSA = message(25) { writer in
            writer.string("ecdsa-sha2-nistp256")
            writer.string("nistp256")
            writer.string(ecdsa.publicKeyData)
            writer.positiveInteger(ecdsaPrivate.suffix(32))
            writer.string("constrained")
            writer.byte(1)
            writer.uint32(60)
            writer.byte(2)
            writer.byte(255)
            writer.string("restrict-destination-v00@openssh.com")
            var hop = SSHWriter()
            hop.string("")  // from: this computer (no user, no host, no keys)
            hop.string("")
            hop.string("")
            var destination = SSHWriter()
            destination.string("alice")
            destination.string("host.example.com")
            destination.string("")
            var keys = SSHWriter()
            keys.string(blobs[0])
            keys.boolean(false)
            destination.raw(keys.data)
            var constraint = SSHWriter()
            constraint.string(hop.data)
            constraint.string(destination.data)
            constraint.string("")
            var list = SSHWriter()
            list.string(constraint.data)
            writer.string(list.data)
        }
        return blobs + [
            message(11),
            message(13) {
                $0.string(blobs[1])
                $0.string("data to sign")
                $0.uint32(4)
            }, addEd25519, addECDSA,
            message(18) { $0.string(blobs[0]) }, message(19), message(9), message(22) { $0.string("lock") },
            message(23) { $0.string("lock") }, message(27) { $0.string("query") },
        ]
    }

    /// The files of Tests/Fixtures/certificates whose names end with `suffix`.
    static func fixtures(ending suffix: String) throws -> [Data] {
        let folder = "Tests/Fixtures/certificates"
        return try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(suffix) }.sorted()
            .map { try Data(contentsOf: URL(fileURLWithPath: folder + "/" + $0)) }
    }

    /// Byte programs for `FuzzTargets.query`, from a fixed generator (its bytes are choices, not text).
    static func query() -> [Data] {
        var state: UInt64 = 0x5EED
        return (0..<48).map { index in
            Data(
                (0..<(16 + index * 6)).map { _ in
                    state = state &* 6364136223846793005 &+ 1442695040888963407
                    return UInt8(truncatingIfNeeded: state >> 56)
                })
        }
    }

    static func backup() throws -> [Data] {
        let items = [
            KeychainBackup.Item(
                itemClass: .genericPassword,
                attributes: [
                    .service: .string("mail"), .account: .string("alice"), .accessGroup: .string("app"),
                    .accessible: .string("ak"), .synchronizable: .number(0), .label: .string("Mail"),
                ], data: Data("hunter2".utf8)),
            KeychainBackup.Item(
                itemClass: .internetPassword,
                attributes: [
                    .server: .string("example.com"), .protocol: .string("htps"), .port: .number(443),
                    .accessGroup: .string("app"), .accessible: .string("ck"),
                    .creationDate: .date(Date(timeIntervalSinceReferenceDate: 0)),
                ], data: nil),
        ]
        let sealed = try KeychainBackup.seal(items, passphrase: Passphrase("seed"), keyDerivation: .minimum)
        let payload = KeychainBackup.encodedPayload(items)
        return [
            Data([0]) + sealed, Data([1]) + payload, Data([1]) + KeychainBackup.encodedPayload([]),
            Data([0]) + sealed.prefix(60),
        ]
    }

    /// Snapshots of a keychain with two items and of an empty one, one of them cut short.
    static func snapshot() throws -> [Data] {
        let keychain = KeychainDatabase.inMemory()
        try keychain.unlock(with: Passphrase("latchkey-in-memory"))
        let empty = KeychainSnapshot.fuzzSeed(database: try keychain.databaseImage(), itemCount: 0)
        for account in ["alice", "bob"] {
            try keychain.add(
                NewItem(
                    .genericPassword, attributes: [.service: .string("mail"), .account: .string(account)],
                    data: Data("hunter2".utf8)),
                caller: CallerIdentity(applicationIdentifier: "app"))
        }
        let two = KeychainSnapshot.fuzzSeed(database: try keychain.databaseImage(), itemCount: 2)
        return [empty, two, two.prefix(two.count / 2)]
    }

    static func commandLine() -> [Data] {
        let invocations: [(String, [String])] = [
            ("find-generic-password", ["-a", "alice", "-s", "mail", "-w"]),
            ("find-generic-password", ["-gaalice", "--access-group", "app", "--", "login.keychain"]),
            ("add-generic-password", ["-U", "-a", "alice", "-s", "mail", "-X", "68756e74657232", "-T", "/bin/true"]),
            ("add-internet-password", ["-s", "example.com", "-r", "htps", "-P", "443", "-p", "/", "-w"]),
            ("delete-generic-password", ["-a", "alice", "-s", "mail"]),
            ("create-keychain", ["--kdf-memory", "19", "--kdf-passes", "2", "-p", "x", "new.keychain"]),
            ("set-keychain-settings", ["-lut", "900"]),
            ("export", ["-o", "backup.lkb", "--include-this-device-only"]),
            ("register-application", ["--app-id", "com.example", "--access-group", "g", "--wildcard", "/bin/true"]),
        ]
        let names = LatchkeyCommandLine.commandNames
        return invocations.map { name, words in
            Data([UInt8(names.firstIndex(of: name) ?? 0)]) + Data(words.joined(separator: "\0").utf8)
        }
    }

    static func agent() -> [Data] {
        let item = NewItem(
            .genericPassword,
            attributes: [
                .service: .string("mail"), .account: .string("alice"), .port: .number(443),
                .synchronizable: .bool(true),
            ],
            data: Data("hunter2".utf8))
        let query = ItemQuery(
            .genericPassword,
            matching: [.service: .string("mail"), .creationDate: .date(Date(timeIntervalSinceReferenceDate: 1))],
            synchronizable: .any, persistentReference: Data(repeating: 3, count: 32), limit: .count(5),
            returning: [.data, .attributes])
        let passphrase = Passphrase("passphrase")
        let keychainRequests: [KeychainRequest] = [
            .status, .unlock(passphrase), .lock, .add(item, returning: [.persistentReference]), .copyMatching(query),
            .update(query, ItemChanges(attributes: [.label: .string("new")], data: Data([1]))), .delete(query),
            .addOrUpdate(item),
            .register(
                executablePath: "/usr/bin/app", applicationIdentifier: "app", accessGroups: ["app", "shared"],
                passphrase: passphrase),
            .unregister(executablePath: "/usr/bin/app", passphrase: passphrase), .listRegistrations,
            .updateSettings(KeychainSettings(autoLockAfterSeconds: 300, lockOnSleep: true), passphrase: passphrase),
            .settings,
        ]
        let requests: [AgentRequest] =
            [
                .hello(
                    keychainPath: "/home/user/.local/share/latchkey/login.keychain",
                    challenge: Array(repeating: 7, count: 16))
            ]
            + keychainRequests.map { .keychain($0) }
        let result = ItemResult(
            itemClass: .internetPassword, attributes: [.server: .string("example.com"), .port: .number(8443)],
            data: Data([1, 2]), persistentReference: Data(repeating: 9, count: 32))
        let registration = ApplicationRegistration(
            executablePath: "/usr/bin/app", executableDigest: Data(repeating: 5, count: 32),
            applicationIdentifier: "app", accessGroups: ["app", "*"])
        let status = KeychainServiceStatus(
            lockState: .locked, keychainPath: "/k", agentProcessIdentifier: 42,
            caller: .registered(CallerIdentity(applicationIdentifier: "app")))
        let responses: [AgentResponse] = [
            AgentResponse(id: 7, operation: .copyMatching, outcome: .success(.items([result, result]))),
            AgentResponse(id: 8, operation: .copyMatching, failure: KeychainError(.itemNotFound, "no match")),
            AgentResponse(id: 9, operation: .add, outcome: .success(.item(result))),
            AgentResponse(id: 10, operation: .status, outcome: .success(.status(status))),
            AgentResponse(id: 11, operation: .listRegistrations, outcome: .success(.registrations([registration]))),
            AgentResponse(id: 12, operation: .update, outcome: .success(.count(3))),
        ]
        return requests.enumerated().map { $0.element.encoded(id: UInt32($0.offset + 1)) }
            + responses.map { $0.encoded() }
            + [Data(AgentGreeting(challenge: Array(repeating: 9, count: AgentGreeting.challengeLength)).encoded())]
    }
}
