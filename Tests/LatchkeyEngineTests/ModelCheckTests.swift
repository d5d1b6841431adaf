import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// Random sequences of add / copyMatching / update / delete / lock / unlock / reopen run against the engine
/// (a real keychain file) and against `KeychainModel`, a small model written from SEMANTICS.md §1–§4 alone.
/// Any difference in result or status fails the test with the sequence shrunk to the fewest operations
/// that still differ. After every sequence, no canary value may appear in any file the keychain wrote.
///
/// The default run checks 40 sequences of 40 operations; `LATCHKEY_SOAK=1` checks 1,000 of 80.
@Suite(.dedicatedThreads) struct ModelCheckTests {
    static var soak: Bool { ProcessInfo.processInfo.environment["LATCHKEY_SOAK"] == "1" }

    @Test func theEngineBehavesAsTheModel() throws {
        let sequences = Self.soak ? 1_000 : 40
        let length = Self.soak ? 80 : 40
        // LATCHKEY_TEST_SEED replays a reported failure.
        let seed = TestSeed.make("ModelCheckTests")
        var generator = SplitMix64(seed: seed)
        var ran: [String: Int] = [:]
        for index in 0..<sequences {
            let sequence = (0..<length).map { _ in ModelOperation.random(using: &generator) }
            if let difference = try Self.firstDifference(sequence) {
                let shrunk = try Self.shrink(sequence)
                let listing = shrunk.enumerated().map { "  \($0.offset): \($0.element)" }.joined(separator: "\n")
                Issue.record(
                    """
                    seed \(seed), sequence \(index): \(difference)
                    shrunk to \(shrunk.count) operations:
                    \(listing)
                    """)
                return
            }
            for operation in sequence { ran[operation.kind, default: 0] += 1 }
        }
        // Every kind of operation was checked, and the figures printed are counted, not assumed.
        #expect(
            Set(ran.keys) == Set(ModelOperation.kinds),
            "kinds never drawn: \(Set(ModelOperation.kinds).subtracting(ran.keys))")
        let total = ran.values.reduce(0, +)
        print(
            "ModelCheckTests: \(total) operations in \(sequences) sequences, 0 differences: "
                + ran.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        // Reaching here means no sequence differed (the first difference records an issue and returns).
        try ReliabilityRecord.write(
            "8-model-check", name: "Model check against SEMANTICS.md",
            unit: "sequences of \(length) operations",
            [.init("agreed with the model", sequences), .init("differed", 0, failure: true)])
    }

    /// The checker itself notices a difference: a model that forgets the duplicate rule disagrees.
    @Test func aWrongModelIsCaughtAndShrunk() throws {
        let sequence: [ModelOperation] = [
            .copy(caller: 0, service: nil, account: nil, sync: .any),
            .add(
                caller: 0, group: nil, service: 0, account: 0, accessibility: .whenUnlocked, sync: false,
                data: "CANARY-1"),
            .lock,
            .add(caller: 0, group: nil, service: 0, account: 0, accessibility: .always, sync: false, data: "CANARY-2"),
            .unlock(correct: true),
        ]
        let difference = try Self.firstDifference(sequence, model: KeychainModel(forgetsDuplicates: true))
        #expect(difference == "operation 3 (add caller 0 group - s0 a0 dk sync 0): engine -25299, model success")
        let shrunk = try Self.shrink(sequence, model: { KeychainModel(forgetsDuplicates: true) })
        #expect(
            shrunk.map(\.description) == [
                "add caller 0 group - s0 a0 ak sync 0", "add caller 0 group - s0 a0 dk sync 0",
            ])
    }

    /// Runs `sequence` on a fresh keychain file and on the model; the first difference, described, or nil.
    static func firstDifference(_ sequence: [ModelOperation], model: KeychainModel = KeychainModel()) throws -> String?
    {
        let directory = TemporaryDirectory()
        let path = directory.file("model.keychain")
        var keychain = try KeychainDatabase.create(
            at: path, passphrase: Passphrase(Fixture.passphrase), keyDerivation: .minimum)
        var model = model
        var canaries: [String] = []
        for (index, operation) in sequence.enumerated() {
            if case .add(_, _, _, _, _, _, let data) = operation { canaries.append(data) }
            if case .update(_, _, _, _, _, let data?) = operation { canaries.append(data) }
            let expected = model.apply(operation)
            let actual = operation.run(on: &keychain, path: path)
            if !expected.accepts(actual) {
                return "operation \(index) (\(operation)): engine \(actual), model \(expected)"
            }
        }
        _ = consume keychain
        let leaks = try canaryLeaks(canaries, in: directory)
        return leaks.isEmpty ? nil : "canaries on disk: \(leaks)"
    }

    /// Removes operations one at a time (then pairs) while the sequence still shows a difference.
    static func shrink(_ sequence: [ModelOperation], model: () -> KeychainModel = { KeychainModel() }) throws
        -> [ModelOperation]
    {
        var current = sequence
        var changed = true
        while changed {
            changed = false
            var index = current.count - 1
            while index >= 0 {
                var candidate = current
                candidate.remove(at: index)
                if try firstDifference(candidate, model: model()) != nil {
                    current = candidate
                    changed = true
                }
                index -= 1
            }
        }
        return current
    }

    static func canaryLeaks(_ canaries: [String], in directory: TemporaryDirectory) throws -> [String] {
        var found: [String] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.file(file)))
            for canary in canaries where bytes.range(of: Data(canary.utf8)) != nil {
                found.append("\(canary) in \(file)")
            }
        }
        return found
    }
}

/// The callers of the model check: two applications sharing a group, and one with its own.
let modelCallers = [
    CallerIdentity(applicationIdentifier: "a", accessGroups: ["a", "shared"]),
    CallerIdentity(applicationIdentifier: "b", accessGroups: ["b"]),
    CallerIdentity(applicationIdentifier: "c", accessGroups: ["shared"]),
]

/// One step of a model-check sequence. Services and accounts are small numbers so that sequences collide.
enum ModelOperation: CustomStringConvertible, Sendable {
    case add(
        caller: Int, group: String?, service: Int, account: Int, accessibility: Accessibility, sync: Bool, data: String)
    case copy(caller: Int, service: Int?, account: Int?, sync: SynchronizableFilter)
    case update(
        caller: Int, service: Int?, account: Int?, sync: SynchronizableFilter, newAccount: Int?, newData: String?)
    case delete(caller: Int, service: Int?, account: Int?, sync: SynchronizableFilter)
    case lock
    case unlock(correct: Bool)
    case reopen

    /// Every kind of operation, by name.
    static let kinds = ["add", "copy", "update", "delete", "lock", "unlock", "reopen"]

    /// This operation's kind.
    var kind: String {
        switch self {
        case .add: "add"
        case .copy: "copy"
        case .update: "update"
        case .delete: "delete"
        case .lock: "lock"
        case .unlock: "unlock"
        case .reopen: "reopen"
        }
    }

    static func random(using generator: inout SplitMix64) -> ModelOperation {
        func pick<T>(_ choices: [T]) -> T { choices[Int(generator.next() % UInt64(choices.count))] }
        func maybe(_ range: Range<Int>) -> Int? { generator.next() % 3 == 0 ? nil : pick(Array(range)) }
        func canary() -> String { "CANARY-" + String(generator.next(), radix: 36) }
        let caller = pick([0, 0, 1, 2])
        let sync: SynchronizableFilter = pick([.no, .no, .no, .yes, .any])
        switch generator.next() % 20 {
        case 0..<6:
            return .add(
                caller: caller, group: pick([nil, nil, "a", "shared", "b"]), service: pick([0, 1]),
                account: pick([0, 1, 2]), accessibility: pick([.whenUnlocked, .afterFirstUnlock, .always]),
                sync: generator.next() % 4 == 0, data: canary())
        case 6..<10: return .copy(caller: caller, service: maybe(0..<2), account: maybe(0..<3), sync: sync)
        case 10..<13:
            let newAccount = generator.next() % 2 == 0 ? pick([0, 1, 2]) : nil
            return .update(
                caller: caller, service: maybe(0..<2), account: maybe(0..<3), sync: sync, newAccount: newAccount,
                newData: newAccount == nil || generator.next() % 2 == 0 ? canary() : nil)
        case 13..<16: return .delete(caller: caller, service: maybe(0..<2), account: maybe(0..<3), sync: sync)
        case 16, 17: return .lock
        case 18: return .unlock(correct: generator.next() % 5 != 0)
        default: return generator.next() % 2 == 0 ? .reopen : .unlock(correct: true)
        }
    }

    var description: String {
        func part(_ letter: String, _ value: Int?) -> String { value.map { "\(letter)\($0)" } ?? "\(letter)*" }
        switch self {
        case .add(let caller, let group, let service, let account, let accessibility, let sync, _):
            return
                "add caller \(caller) group \(group ?? "-") s\(service) a\(account) \(accessibility.rawValue) sync \(sync ? 1 : 0)"
        case .copy(let caller, let service, let account, let sync):
            return "copy caller \(caller) \(part("s", service)) \(part("a", account)) sync \(sync)"
        case .update(let caller, let service, let account, let sync, let newAccount, let newData):
            return
                "update caller \(caller) \(part("s", service)) \(part("a", account)) sync \(sync) → \(newAccount.map { "a\($0)" } ?? "same account")\(newData == nil ? "" : " new data")"
        case .delete(let caller, let service, let account, let sync):
            return "delete caller \(caller) \(part("s", service)) \(part("a", account)) sync \(sync)"
        case .lock: return "lock"
        case .unlock(let correct): return correct ? "unlock" : "unlock with a wrong passphrase"
        case .reopen: return "reopen"
        }
    }

    /// Runs the operation on the engine and describes the outcome as the model does.
    func run(on keychain: inout KeychainDatabase, path: String) -> ModelOutcome {
        func matching(_ service: Int?, _ account: Int?) -> [AttributeKey: AttributeValue] {
            var matching: [AttributeKey: AttributeValue] = [:]
            if let service { matching[.service] = .string("s\(service)") }
            if let account { matching[.account] = .string("a\(account)") }
            return matching
        }
        do throws(KeychainError) {
            switch self {
            case .add(let caller, let group, let service, let account, let accessibility, let sync, let data):
                var attributes = matching(service, account)
                attributes[.accessible] = .string(accessibility.rawValue)
                if sync { attributes[.synchronizable] = .bool(true) }
                if let group { attributes[.accessGroup] = .string(group) }
                _ = try keychain.add(
                    NewItem(.genericPassword, attributes: attributes, data: Data(data.utf8)),
                    caller: modelCallers[caller])
            case .copy(let caller, let service, let account, let sync):
                let found = try keychain.copyMatching(
                    ItemQuery(
                        .genericPassword, matching: matching(service, account), synchronizable: sync, limit: .all,
                        returning: [.attributes, .data]), caller: modelCallers[caller])
                return .found(
                    found.map { item in
                        ModelItem(
                            group: item[.accessGroup]?.stringValue ?? "?", sync: item[.synchronizable] == .number(1),
                            service: item[.service]?.stringValue ?? "?", account: item[.account]?.stringValue ?? "?",
                            accessibility: item[.accessible]?.stringValue ?? "?",
                            data: item.data.map { String(decoding: $0, as: UTF8.self) } ?? "?"
                        ).description
                    }.sorted())
            case .update(let caller, let service, let account, let sync, let newAccount, let newData):
                var changes = ItemChanges(data: newData.map { Data($0.utf8) })
                if let newAccount { changes.attributes[.account] = .string("a\(newAccount)") }
                try keychain.update(
                    ItemQuery(.genericPassword, matching: matching(service, account), synchronizable: sync),
                    with: changes, caller: modelCallers[caller])
            case .delete(let caller, let service, let account, let sync):
                _ = try keychain.delete(
                    ItemQuery(.genericPassword, matching: matching(service, account), synchronizable: sync),
                    caller: modelCallers[caller])
            case .lock:
                keychain.lock()
            case .unlock(let correct):
                try keychain.unlock(with: Passphrase(correct ? Fixture.passphrase : "not the passphrase"))
            case .reopen:
                keychain = KeychainDatabase.inMemory()  // Closes the previous handle before the file is opened again.
                keychain = try KeychainDatabase.open(at: path)
            }
            return .success
        } catch {
            return .failure(error.status.rawValue)
        }
    }
}

/// What an operation answered: success, the items a search found (described and sorted), or a status.
enum ModelOutcome: Equatable, CustomStringConvertible, Sendable {
    case success
    case found([String])
    case failure(Int32)
    /// Either status: an update that meets both a locked match and a duplicate reports whichever item it
    /// reaches first, in the database's order (as Apple's `s_update` does, item by item).
    case eitherFailure(Int32, Int32)

    func accepts(_ actual: ModelOutcome) -> Bool {
        if case .eitherFailure(let first, let second) = self {
            return actual == .failure(first) || actual == .failure(second)
        }
        return self == actual
    }

    var description: String {
        switch self {
        case .success: "success"
        case .found(let items): "found \(items)"
        case .failure(let status): "\(status)"
        case .eitherFailure(let first, let second): "\(first) or \(second)"
        }
    }
}

/// One generic password as the model holds it.
struct ModelItem: Hashable, CustomStringConvertible, Sendable {
    var group: String
    var sync: Bool
    var service: String
    var account: String
    var accessibility: String
    var data: String

    var description: String { "\(group)/\(sync ? 1 : 0)/\(service)/\(account)/\(accessibility)=\(data)" }
    /// The primary key (SEMANTICS.md §1): access group, sync flag, service, account.
    var primaryKey: String { "\(group)|\(sync)|\(service)|\(account)" }
}

/// A model of SEMANTICS.md for generic passwords, written from the document and not from the engine:
/// uniqueness on (agrp, sync, svce, acct); the caller's first group by default; `errSecMissingEntitlement`
/// for a group the caller does not hold; the synchronizable filter; searches limited to the caller's groups;
/// lock states of §4 (`ak` while unlocked, `ck` from the first unlock, `dk` always) with a locked match
/// failing the whole operation; and DESIGN-NOTES' delete-while-locked rule (allowed unless a locked match is
/// synchronizable, whose tombstone must be encrypted).
struct KeychainModel: Sendable {
    var items: [ModelItem] = []
    var unlocked = true
    var unlockedSinceOpen = true
    /// A deliberately broken model, to show the checker catches a difference.
    var forgetsDuplicates = false

    func available(_ accessibility: String) -> Bool {
        switch accessibility {
        case "ak": unlocked
        case "ck": unlockedSinceOpen
        default: true
        }
    }

    func matches(caller: Int, service: Int?, account: Int?, sync: SynchronizableFilter) -> [Int] {
        let groups = modelCallers[caller].accessGroups
        return items.indices.filter { index in
            let item = items[index]
            guard groups.contains(item.group) else { return false }
            switch sync {
            case .no: if item.sync { return false }
            case .yes: if !item.sync { return false }
            case .any: break
            }
            if let service, item.service != "s\(service)" { return false }
            if let account, item.account != "a\(account)" { return false }
            return true
        }
    }

    mutating func apply(_ operation: ModelOperation) -> ModelOutcome {
        switch operation {
        case .add(let caller, let group, let service, let account, let accessibility, let sync, let data):
            let groups = modelCallers[caller].accessGroups
            if let group, !groups.contains(group) { return .failure(-34018) }
            guard available(accessibility.rawValue) else { return .failure(-25308) }
            let item = ModelItem(
                group: group ?? groups[0], sync: sync, service: "s\(service)", account: "a\(account)",
                accessibility: accessibility.rawValue, data: data)
            if !forgetsDuplicates, items.contains(where: { $0.primaryKey == item.primaryKey }) {
                return .failure(-25299)
            }
            items.append(item)
            return .success
        case .copy(let caller, let service, let account, let sync):
            let found = matches(caller: caller, service: service, account: account, sync: sync)
            guard !found.isEmpty else { return .failure(-25300) }
            guard found.allSatisfy({ available(items[$0].accessibility) }) else { return .failure(-25308) }
            return .found(found.map { items[$0].description }.sorted())
        case .update(let caller, let service, let account, let sync, let newAccount, let newData):
            let found = matches(caller: caller, service: service, account: account, sync: sync)
            guard !found.isEmpty else { return .failure(-25300) }
            let locked = !found.allSatisfy({ available(items[$0].accessibility) })
            var updated = items
            for index in found {
                if let newAccount { updated[index].account = "a\(newAccount)" }
                if let newData { updated[index].data = newData }
            }
            let duplicate = Set(updated.map(\.primaryKey)).count != updated.count
            switch (locked, duplicate) {
            case (true, true): return .eitherFailure(-25308, -25299)
            case (true, false): return .failure(-25308)
            case (false, true): return .failure(-25299)
            case (false, false):
                items = updated
                return .success
            }
        case .delete(let caller, let service, let account, let sync):
            let found = matches(caller: caller, service: service, account: account, sync: sync)
            guard !found.isEmpty else { return .failure(-25300) }
            guard found.allSatisfy({ !items[$0].sync || available(items[$0].accessibility) }) else {
                return .failure(-25308)
            }
            items = items.indices.filter { !found.contains($0) }.map { items[$0] }
            return .success
        case .lock:
            unlocked = false
            return .success
        case .unlock(let correct):
            guard correct else { return .failure(-25293) }
            unlocked = true
            unlockedSinceOpen = true
            return .success
        case .reopen:
            unlocked = false
            unlockedSinceOpen = false
            return .success
        }
    }
}
