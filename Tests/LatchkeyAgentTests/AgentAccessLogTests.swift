import Foundation
import Latchkey
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The access log through the agent's socket: a mixed run of 1,000 operations (adds, reads, updates,
/// deletions and refusals) leaves exactly one entry each — who, what, allowed or refused — with the refusals
/// also in the agent's log, and not one byte of any secret in the keychain's files; `latchkey log` shows and
/// filters it; a kill -9 loses no entry of an answered request.
@Suite(.serialized, .dedicatedThreads) struct AgentAccessLogTests {
    /// This test process's executable, which the test registers to talk to the agent itself.
    static let testProgram = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path

    func servedSandbox() throws -> (AgentSandbox, AgentKeychainService) {
        let sandbox = try AgentSandbox()
        try sandbox.start()
        try sandbox.unlock()
        try sandbox.register(Self.testProgram, appID: "com.example.tests", groups: ["tests"])
        let client = try #require(
            try AgentClient.connect(keychainPath: sandbox.keychainPath, environment: sandbox.environment))
        return (sandbox, AgentKeychainService(client: client))
    }

    static func account(_ index: Int) -> [AttributeKey: AttributeValue] {
        [.service: .string("mixed"), .account: .string("account-\(index)")]
    }

    @Test func aMixedRunOfAThousandOperationsIsLoggedWithoutASecret() throws {
        let (sandbox, service) = try servedSandbox()
        var secrets: [Data] = []
        func secret(_ index: Int) -> Data {
            let value = Data("SECRET-\(index)-".utf8) + SecureRandom.bytes(16)
            secrets.append(value)
            return value
        }
        var references: [Int: Data] = [:]
        for index in 0..<200 {
            let added = try service.add(
                NewItem(.genericPassword, attributes: Self.account(index), data: secret(index)),
                returning: .persistentReference)
            references[index] = try #require(added?.persistentReference)
        }
        for index in 0..<400 {
            let found = try service.copyMatching(
                ItemQuery(.genericPassword, matching: Self.account(index % 200), returning: .data))
            #expect(found.count == 1 && found.first?.attributes.isEmpty == true, "the log's attributes are taken off")
        }
        for index in 0..<150 {
            #expect(
                try service.update(
                    ItemQuery(.genericPassword, matching: Self.account(index)),
                    with: ItemChanges(data: secret(1_000 + index))) == 1)
        }
        for index in 100..<200 {
            #expect(try service.delete(ItemQuery(.genericPassword, matching: Self.account(index))) == 1)
        }
        for index in 0..<150 {
            var matching = Self.account(index)
            matching[.accessGroup] = .string("not-the-tests-group")
            let refused = #expect(throws: KeychainError.self) {
                try service.copyMatching(ItemQuery(.genericPassword, matching: matching, returning: .data))
            }
            #expect(refused?.status == .missingEntitlement)
        }

        let database = try KeychainDatabase.open(at: sandbox.keychainPath)
        try database.unlock(with: Passphrase(AgentSandbox.passphrase))
        let (entries, dropped) = try database.accessLog { $0.caller.program == Self.testProgram }
        #expect(dropped == 0)
        #expect(entries.count == 1_000)
        let counts = Dictionary(grouping: entries) { "\($0.operation) \($0.allowed)" }.mapValues(\.count)
        #expect(
            counts == ["add true": 200, "read true": 400, "update true": 150, "delete true": 100, "read false": 150])
        #expect(entries.allSatisfy { $0.caller.pid == getpid() && $0.caller.uid == getuid() })
        #expect(entries.allSatisfy { $0.caller.frontEnd == "the agent's socket" })
        #expect(entries.allSatisfy { $0.caller.identity.hasPrefix("executable ") })
        let first = try #require(entries.first)
        #expect(first.item.reference == references[0])
        #expect(first.item.names == "service=mixed account=account-0")
        #expect(first.reason == "its access groups")
        let deletions = entries.filter { $0.operation == .delete }
        #expect(deletions.map(\.item.reference) == (100..<200).map { references[$0] })
        let refusal = try #require(entries.last)
        #expect(refusal.item.reference == nil && refusal.item.names == "service=mixed account=account-149")
        #expect(refusal.reason.hasPrefix("errSecMissingEntitlement (-34018): "), "\(refusal.reason)")
        let journal = sandbox.agentLog.components(separatedBy: "\n").filter {
            $0.contains("refused read of genp item service=mixed account=account-") && $0.contains(Self.testProgram)
        }
        #expect(journal.count == 150)

        // Not one secret in any file of the keychain (the database, its WAL, the device key, the access log's
        // journal). The agent folds the journal every second: a file that went between the listing and the
        // read is skipped (what it held is in the fold or the database, read too).
        let folder = URL(fileURLWithPath: sandbox.keychainPath).deletingLastPathComponent().path
        let files = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(files.contains { $0.hasSuffix(".keychain") })
        for file in files {
            guard let bytes = FileManager.default.contents(atPath: folder + "/" + file) else { continue }
            #expect(secrets.allSatisfy { bytes.range(of: $0) == nil }, "a secret is in \(file)")
            #expect(bytes.range(of: Data("SECRET-".utf8)) == nil, "a secret's prefix is in \(file)")
        }

        // `latchkey log`: one item's entries, one program's, as lines and as JSON.
        let item = Hex.encode(try #require(references[0]))
        let shown = try sandbox.cli("log", "--item", item).stdout.split(separator: "\n")
        #expect(shown.count == 4, "add, two reads, update")
        #expect(shown.first?.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z .*/) != nil)
        #expect(
            shown.first?.hasSuffix(
                " allowed add genp \(item) service=mixed account=account-0 by \(Self.testProgram) (executable "
                    + "\(first.caller.identity.dropFirst("executable ".count))) pid \(getpid()) uid \(getuid()) through "
                    + "the agent's socket: its access groups") == true, "\(shown.first ?? "")")
        let json = try sandbox.cli("log", "--json", "--program", Self.testProgram, "--since", "1d").stdout
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(document["dropped"] as? Int == 0)
        #expect((document["entries"] as? [Any])?.count == 1_000)
        #expect(try sandbox.cli("log", "--program", "/nowhere").stdout == "")
    }

    @Test func aKillDuringARunLosesNoAnsweredRequestsEntry() throws {
        let (sandbox, service) = try servedSandbox()
        _ = try service.add(NewItem(.genericPassword, attributes: Self.account(0), data: Data("x".utf8)), returning: [])
        let answered = Counter()
        let reader = Thread {
            while true {
                do {
                    _ = try service.copyMatching(ItemQuery(.genericPassword, matching: Self.account(0)))
                    answered.increment()
                } catch {
                    return  // The agent is gone.
                }
            }
        }
        reader.start()
        try waitUntil("a hundred reads answered") { answered.value >= 100 }
        sandbox.stop(signal: SIGKILL)
        try waitUntil("the reader stops") { reader.isFinished }
        let database = try KeychainDatabase.open(at: sandbox.keychainPath)
        try database.unlock(with: Passphrase(AgentSandbox.passphrase))
        let reads = try database.accessLog { $0.operation == .read && $0.caller.program == Self.testProgram }.entries
        #expect(reads.count >= answered.value, "every answered read has its entry")
        #expect(reads.count <= answered.value + 1, "at most the read in flight is logged but unanswered")
    }
}

/// A count shared with the reading thread.
final class Counter: @unchecked Sendable {
    // @unchecked: every access holds the lock.
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}
