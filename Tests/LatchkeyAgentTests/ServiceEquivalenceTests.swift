import Foundation
import LatchkeyTestSupport
import Testing

@testable import Latchkey

/// The agent and the embedded keychain are one seam: a table of typed operations — successes and failures —
/// gives the same results and the same errors (status and detail) through `latchkeyd` as through
/// `LocalKeychainService` in this process, for the same caller.
@Suite(.serialized, .dedicatedThreads) struct ServiceEquivalenceTests {
    /// A result with what legitimately differs between two keychains taken out: dates and persistent
    /// references (random per keychain).
    struct Normalized: Equatable, CustomStringConvertible {
        let itemClass: ItemClass
        let attributes: [AttributeKey: AttributeValue]
        let data: Data?

        init(_ result: ItemResult) {
            itemClass = result.itemClass
            attributes = result.attributes.filter { $0.key != .creationDate && $0.key != .modificationDate }
            data = result.data
        }

        var description: String {
            "\(itemClass.rawValue) \(attributes.sorted { $0.key.rawValue < $1.key.rawValue }) data: \(data.map { String(decoding: $0, as: UTF8.self) } ?? "none")"
        }
    }

    enum Outcome: Equatable {
        case item(Normalized?)
        case items([Normalized])
        case count(Int)
        case flag(Bool)
        case settings(KeychainSettings)
        case failure(KeychainError)
    }

    static let mail: [AttributeKey: AttributeValue] = [.service: .string("mail"), .account: .string("alice")]
    static let web: [AttributeKey: AttributeValue] = [
        .server: .string("example.com"), .protocol: .string("htps"), .port: .number(443), .account: .string("bob"),
    ]

    /// The operations, in order; each sees the state the ones before it left.
    static let operations: [(String, @Sendable (any KeychainService) throws(KeychainError) -> Outcome)] = [
        (
            "add, returning attributes and data",
            { service throws(KeychainError) in
                .item(
                    try service.add(
                        NewItem(.genericPassword, attributes: mail, data: Data("one".utf8)),
                        returning: [.attributes, .data]
                    )
                    .map(Normalized.init))
            }
        ),
        (
            "add a duplicate",
            { service throws(KeychainError) in
                .item(
                    try service.add(
                        NewItem(.genericPassword, attributes: mail, data: Data("again".utf8)), returning: []
                    ).map(Normalized.init))
            }
        ),
        (
            "add an internet password, returning a reference",
            { service throws(KeychainError) in
                .item(
                    try service.add(
                        NewItem(.internetPassword, attributes: web, data: Data("two".utf8)),
                        returning: .persistentReference
                    )
                    .map(Normalized.init))
            }
        ),
        (
            "add to the shared group, synchronizable",
            { service throws(KeychainError) in
                .item(
                    try service.add(
                        NewItem(
                            .genericPassword,
                            attributes: [
                                .service: .string("sync"), .account: .string("carol"), .accessGroup: .string("shared"),
                                .synchronizable: .bool(true),
                            ], data: Data("three".utf8)), returning: .attributes
                    ).map(Normalized.init))
            }
        ),
        (
            "add to a group the caller does not hold",
            { service throws(KeychainError) in
                .item(
                    try service.add(
                        NewItem(
                            .genericPassword, attributes: [.service: .string("x"), .accessGroup: .string("foreign")]),
                        returning: []
                    ).map(Normalized.init))
            }
        ),
        (
            "add a secret above the limit",
            { service throws(KeychainError) in
                .item(
                    try service.add(
                        NewItem(
                            .genericPassword, attributes: [.service: .string("big")],
                            data: Data(count: ItemLimits.maximumDataBytes + 1)), returning: []
                    ).map(Normalized.init))
            }
        ),
        (
            "add an unknown attribute",
            { service throws(KeychainError) in
                .item(
                    try service.add(NewItem(.genericPassword, attributes: ["zzzz": .string("?")]), returning: []).map(
                        Normalized.init))
            }
        ),
        (
            "find every password, attributes",
            { service throws(KeychainError) in
                .items(
                    try service.copyMatching(ItemQuery(.genericPassword, limit: .all, returning: .attributes)).map(
                        Normalized.init))
            }
        ),
        (
            "find every password of any synchronizability, data and attributes",
            { service throws(KeychainError) in
                .items(
                    try service.copyMatching(
                        ItemQuery(
                            .genericPassword, synchronizable: .any, limit: .all,
                            returning: [.data, .attributes])
                    ).map(Normalized.init))
            }
        ),
        (
            "find one by its whole primary key, data",
            { service throws(KeychainError) in
                .items(
                    try service.copyMatching(ItemQuery(.internetPassword, matching: web, returning: .data)).map(
                        Normalized.init))
            }
        ),
        (
            "find nothing",
            { service throws(KeychainError) in
                .items(
                    try service.copyMatching(ItemQuery(.genericPassword, matching: [.service: .string("nothing")])).map(
                        Normalized.init))
            }
        ),
        (
            "find keys (none)",
            { service throws(KeychainError) in
                .items(try service.copyMatching(ItemQuery(.key, limit: .all)).map(Normalized.init))
            }
        ),
        (
            "update the secret",
            { service throws(KeychainError) in
                .count(
                    try service.update(
                        ItemQuery(.genericPassword, matching: mail), with: ItemChanges(data: Data("uno".utf8))))
            }
        ),
        (
            "update into a duplicate",
            { service throws(KeychainError) in
                .count(
                    try service.update(
                        ItemQuery(.genericPassword, matching: [.service: .string("sync")], synchronizable: .any),
                        with: ItemChanges(attributes: [
                            .service: .string("mail"), .account: .string("alice"),
                            .synchronizable: .bool(false),
                            .accessGroup: .string("equivalence"),
                        ])))
            }
        ),
        (
            "update nothing",
            { service throws(KeychainError) in
                .count(
                    try service.update(
                        ItemQuery(.genericPassword, matching: [.service: .string("nothing")]),
                        with: ItemChanges(attributes: [.label: .string("x")])))
            }
        ),
        (
            "add or update an existing item",
            { service throws(KeychainError) in
                .flag(try service.addOrUpdate(NewItem(.genericPassword, attributes: mail, data: Data("eins".utf8))))
            }
        ),
        (
            "add or update a new item",
            { service throws(KeychainError) in
                .flag(
                    try service.addOrUpdate(
                        NewItem(.genericPassword, attributes: [.service: .string("new")], data: Data("neu".utf8))))
            }
        ),
        (
            "read back after the writes",
            { service throws(KeychainError) in
                .items(
                    try service.copyMatching(
                        ItemQuery(
                            .genericPassword, synchronizable: .any, limit: .all,
                            returning: [.data, .attributes])
                    ).map(Normalized.init))
            }
        ),
        (
            "delete one",
            { service throws(KeychainError) in .count(try service.delete(ItemQuery(.genericPassword, matching: mail))) }
        ),
        (
            "delete it again",
            { service throws(KeychainError) in .count(try service.delete(ItemQuery(.genericPassword, matching: mail))) }
        ),
        (
            "delete every synchronizable item",
            { service throws(KeychainError) in
                .count(
                    try service.delete(
                        ItemQuery(.genericPassword, matching: [.synchronizable: .bool(true)], limit: .all)))
            }
        ),
        ("the settings", { service throws(KeychainError) in .settings(try service.settings()) }),
        (
            "add certificates, deriving their attributes",
            { service throws(KeychainError) in
                var added: [Normalized] = []
                for name in ["root-rsa.der", "intermediate-ec384.der", "leaf-ec256.der", "expired.der"] {
                    if let result = try service.add(NewItem(.certificate, data: fixture(name)), returning: .attributes)
                    {
                        added.append(Normalized(result))
                    }
                }
                return .items(added)
            }
        ),
        (
            "add bytes that are no certificate",
            { service throws(KeychainError) in
                .item(
                    try service.add(NewItem(.certificate, data: Data("not a certificate".utf8)), returning: []).map(
                        Normalized.init))
            }
        ),
        (
            "find certificates by issuer chain, date and subject",
            { service throws(KeychainError) in
                let rootSubject =
                    (try? Certificate(derRepresentation: fixture("root-rsa.der")))?.normalizedSubject ?? Data()
                return .items(
                    try service.copyMatching(
                        ItemQuery(
                            .certificate, limit: .all, returning: [.attributes, .data],
                            certificateMatch: CertificateMatch(
                                issuers: [rootSubject], validOn: Date(timeIntervalSince1970: 1_800_000_000),
                                subjectContains: "EXAMPLE",
                                caseInsensitive: true))
                    ).map(Normalized.init))
            }
        ),
        (
            "find certificates by common name, as macOS's subject filters do",
            { service throws(KeychainError) in
                .items(
                    try service.copyMatching(
                        ItemQuery(
                            .certificate, limit: .all, returning: .attributes,
                            certificateMatch: CertificateMatch(
                                caseInsensitive: true, subjectStartsWith: "ｗｗｗ", subjectEndsWith: "EXAMPLE.COM",
                                widthInsensitive: true))
                    ).map(Normalized.init))
            }
        ),
        (
            "find only trusted certificates",
            { service throws(KeychainError) in
                .items(
                    try service.copyMatching(
                        ItemQuery(
                            .certificate, limit: .all, returning: .attributes,
                            certificateMatch: CertificateMatch(trustedOnly: true))
                    ).map(Normalized.init))
            }
        ),
        (
            "an identity, composed over the service",
            { service throws(KeychainError) in
                let key = fixture("leaf-ec256.key")
                let privateKey: AsymmetricKey
                do {
                    privateKey = try AsymmetricKey(externalRepresentation: key, type: .ellipticCurve, isPrivate: true)
                } catch let failure as KeyError {
                    throw KeychainError(.decode, failure.reason)
                } catch {
                    throw KeychainError(.decode, "\(error)")
                }
                _ = try service.add(
                    NewItem(.key, attributes: KeyAttributes.derived(from: privateKey), data: key), returning: [])
                let found = try ServiceBackend(service: service).copyMatching([
                    "class": "idnt", "m_Limit": "m_LimitAll", "r_Attributes": true,
                ])
                return .count((found as? [[String: Any]])?.count ?? -1)
            }
        ),
    ]

    /// A committed certificate fixture (empty when missing, which the results then show).
    static func fixture(_ name: String) -> Data {
        (try? CertificateFixtures.der(name)) ?? Data()  // A missing fixture makes both sides fail alike.
    }

    @Test func theAgentAndTheEmbeddedKeychainAnswerAlike() throws {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        // This test process is the program the agent serves.
        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        try sandbox.register(me, appID: "equivalence", groups: ["equivalence", "shared"])
        let client = try #require(
            try AgentClient.connect(keychainPath: sandbox.keychainPath, environment: sandbox.environment))
        let agent = AgentKeychainService(client: client)
        guard case .registered(let caller) = try agent.status().caller else {
            Issue.record("the agent does not serve this process as registered: \(try agent.status())")
            return
        }
        #expect(
            caller == CallerIdentity(applicationIdentifier: "equivalence", accessGroups: ["equivalence", "shared"]))

        let directory = TemporaryDirectory()
        let database = try KeychainDatabase.create(
            at: directory.file("embedded.keychain"), passphrase: Passphrase("embedded"),
            keyDerivation: .minimum)
        let embedded = LocalKeychainService(database: database, caller: caller)

        var failures = 0
        var outcomes: [String: Outcome] = [:]
        for (name, operation) in Self.operations {
            let throughAgent: Outcome
            let inProcess: Outcome
            do throws(KeychainError) { throughAgent = try operation(agent) } catch { throughAgent = .failure(error) }
            do throws(KeychainError) { inProcess = try operation(embedded) } catch { inProcess = .failure(error) }
            #expect(throughAgent == inProcess, "\(name): agent \(throughAgent), embedded \(inProcess)")
            if case .failure = inProcess { failures += 1 }
            outcomes[name] = inProcess
        }
        // The table exercises failures as well as successes (so a path that fails everything cannot pass):
        // the duplicate, the foreign group, the size limit, the unknown attribute, three not-found lookups or
        // updates, the clashing update, the second delete, the bytes that are no certificate, no trusted one.
        #expect(failures == 11)
        guard case .items(let certificates)? = outcomes["add certificates, deriving their attributes"] else {
            Issue.record("no certificates added")
            return
        }
        #expect(
            certificates.map { $0.attributes[.label] } == [
                .string("Latchkey Test Root"), .string("  issuing   authority "), .string("www.example.com"),
                .string("expired.example.com"),
            ])
        #expect(
            outcomes["add bytes that are no certificate"]
                == .failure(
                    KeychainError(
                        .decode,
                        "kSecValueData of a certificate item must be one DER-encoded X.509 certificate: the data is not a DER-encoded X.509 certificate"
                    )))
        guard case .items(let filtered)? = outcomes["find certificates by issuer chain, date and subject"] else {
            Issue.record("no filtered search")
            return
        }
        #expect(filtered.map { $0.attributes[.label] } == [.string("www.example.com")])
        #expect(outcomes["find only trusted certificates"] == .failure(KeychainError(.itemNotFound)))
        #expect(outcomes["an identity, composed over the service"] == .count(1))
        guard case .items(let all)? = outcomes["read back after the writes"] else {
            Issue.record("no read-back")
            return
        }
        #expect(all.map { $0.data.map { String(decoding: $0, as: UTF8.self) } } == ["eins", "three", "neu"])
        #expect(
            outcomes["add to a group the caller does not hold"]
                == .failure(
                    KeychainError(
                        .missingEntitlement,
                        "caller equivalence is not entitled to access group foreign")))
    }
}
