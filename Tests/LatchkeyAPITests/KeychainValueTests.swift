import Foundation
import Latchkey
import LatchkeyTestSupport
import LatchkeyTesting
import Testing

@Suite(.dedicatedThreads) struct KeychainValueTests {
    let memory = InMemoryKeychain()

    @Test func setReadOverwriteAndRemove() throws {
        let keychain = memory.keychain(service: "com.example.mail")
        #expect(try keychain.string(forKey: "alice") == nil)
        #expect(try !keychain.contains("alice"))
        try keychain.set("hunter2", forKey: "alice")
        #expect(try keychain.string(forKey: "alice") == "hunter2")
        #expect(try keychain.contains("alice"))
        try keychain.set("correct horse", forKey: "alice")
        #expect(try keychain.string(forKey: "alice") == "correct horse")
        #expect(try memory.itemCount() == 1)
        try keychain.set(Data([0, 1, 2, 255]), forKey: "binary")
        #expect(try keychain.data(forKey: "binary") == Data([0, 1, 2, 255]))
        #expect(try keychain.remove("alice"))
        #expect(try !keychain.remove("alice"), "removing a missing item is not an error")
        #expect(try keychain.string(forKey: "alice") == nil)
    }

    @Test func servicesAreSeparate() throws {
        try memory.keychain(service: "a").set("1", forKey: "k")
        try memory.keychain(service: "b").set("2", forKey: "k")
        #expect(try memory.keychain(service: "a").string(forKey: "k") == "1")
        #expect(try memory.keychain(service: "b").string(forKey: "k") == "2")
    }

    @Test func bytesThatAreNotUTF8AreADecodeFailure() throws {
        let keychain = memory.keychain(service: "s")
        try keychain.set(Data([0xFF, 0xFE]), forKey: "k")
        let failure = #expect(throws: KeychainFailure.self) { try keychain.string(forKey: "k") }
        guard case .decode(let error)? = failure else {
            Issue.record("expected .decode, got \(String(describing: failure))")
            return
        }
        #expect(error.detail == "the value stored for key 'k' is not UTF-8 text")
    }

    @Test func emptyKeysAndServicesAreParam() throws {
        let failure = #expect(throws: KeychainFailure.self) { try memory.keychain(service: "s").set("x", forKey: "") }
        #expect(failure?.status == .param)
        #expect(failure?.error.detail == "the key must not be empty")
        #expect(status { _ = try memory.keychain(service: "").string(forKey: "k") } == .param)
        #expect(status { _ = try memory.keychain(server: "").string(forKey: "k") } == .param)
        #expect(status { _ = try memory.keychain(server: "h", port: 70_000).string(forKey: "k") } == .param)
    }

    @Test func aValueAboveTheLimitIsParamAndKeepsTheOldOne() throws {
        let keychain = memory.keychain(service: "s")
        try keychain.set("old", forKey: "k")
        let failure = #expect(throws: KeychainFailure.self) {
            try keychain.set(Data(count: ItemLimits.maximumDataBytes + 1), forKey: "k")
        }
        guard case .param? = failure else {
            Issue.record("expected .param")
            return
        }
        #expect(try keychain.string(forKey: "k") == "old")
    }

    @Test func aLockedKeychainIsInteractionNotAllowed() throws {
        let keychain = memory.keychain(service: "s")
        try keychain.set("v", forKey: "k")
        try keychain.accessibility(.afterFirstUnlock).set("v", forKey: "ck")
        memory.lock()
        let failure = #expect(throws: KeychainFailure.self) { try keychain.string(forKey: "k") }
        guard case .interactionNotAllowed? = failure else {
            Issue.record("expected .interactionNotAllowed")
            return
        }
        #expect(failure?.status.rawValue == -25308)
        #expect(status { try keychain.set("w", forKey: "k") } == .interactionNotAllowed)
        #expect(status { _ = try keychain.contains("k") } == .interactionNotAllowed)
        // "After first unlock" items stay readable while locked.
        #expect(try keychain.string(forKey: "ck") == "v")
        memory.unlock()
        #expect(try keychain.string(forKey: "k") == "v")
    }

    @Test func aForeignAccessGroupIsMissingEntitlement() throws {
        // A backend whose caller holds only its own group, as the agent grants a registered program.
        let confined = Keychain(
            service: "s", accessGroup: "com.example.someone-else",
            connection: .backend(memory.backend()))
        let failure = #expect(throws: KeychainFailure.self) { try confined.set("x", forKey: "k") }
        guard case .missingEntitlement? = failure else {
            Issue.record("expected .missingEntitlement")
            return
        }
        #expect(status { _ = try confined.string(forKey: "k") } == .missingEntitlement)
        // The same group through a connection that grants it works.
        try memory.keychain(service: "s", accessGroup: "com.example.shared").set("x", forKey: "k")
        #expect(try memory.keychain(service: "s", accessGroup: "com.example.shared").string(forKey: "k") == "x")
        #expect(try memory.keychain(service: "s").string(forKey: "k") == nil, "the app's own group is separate")
    }

    @Test func modifiersAreWrittenAndReadBack() throws {
        let keychain = memory.keychain(service: "s").label("Mail password").comment("rotated monthly")
            .accessibility(.afterFirstUnlockThisDeviceOnly)
        let before = Date()
        try keychain.set("v", forKey: "alice")
        let entry = try #require(try keychain.attributes(forKey: "alice"))
        #expect(entry.key == "alice")
        #expect(entry.label == "Mail password")
        #expect(entry.comment == "rotated monthly")
        #expect(entry.accessibility == .afterFirstUnlockThisDeviceOnly)
        #expect(entry.isSynchronizable == false)
        #expect(entry.accessGroup == "com.example.tests")
        #expect(try #require(entry.creationDate) >= before)
        #expect(entry.modificationDate == entry.creationDate)
        #expect(try keychain.attributes(forKey: "bob") == nil)
        // Modifiers return copies: the original value is unchanged.
        let plain = memory.keychain(service: "s")
        #expect(plain.label == nil && plain.accessibility == .whenUnlocked)
    }

    @Test func synchronizableValuesSeeOnlySynchronizableItems() throws {
        let local = memory.keychain(service: "s")
        let synced = local.synchronizable(true)
        try local.set("local", forKey: "k")
        try synced.set("synced", forKey: "k")
        #expect(try local.string(forKey: "k") == "local")
        #expect(try synced.string(forKey: "k") == "synced")
        #expect(try synced.attributes(forKey: "k")?.isSynchronizable == true)
        // A synchronizable ThisDeviceOnly item is stored, as Apple stores it (it never leaves the device).
        try synced.accessibility(.whenUnlockedThisDeviceOnly).set("x", forKey: "k2")
        #expect(try synced.string(forKey: "k2") == "x")
        #expect(try synced.attributes(forKey: "k2")?.accessibility == .whenUnlockedThisDeviceOnly)
    }

    @Test func internetPasswordsAreKeyedByServerProtocolPortPathAndMore() throws {
        let https = memory.keychain(server: "example.com", protocol: .https, port: 443)
        let imap = memory.keychain(server: "example.com", protocol: .imaps, port: 993)
        try https.set("web", forKey: "alice")
        try imap.set("mail", forKey: "alice")
        #expect(try https.string(forKey: "alice") == "web")
        #expect(try imap.string(forKey: "alice") == "mail")
        let withPath = Keychain(
            server: "example.com", protocol: .https, port: 443, path: "/admin",
            authenticationType: .htmlForm, securityDomain: "corp", connection: memory.connection)
        #expect(try withPath.string(forKey: "alice") == nil)
        try withPath.set("admin", forKey: "alice")
        let stored =
            try memory.backend().copyMatching(["class": "inet", "path": "/admin", "r_Attributes": true])
            as? [String: Any]
        #expect(stored?["srvr"] as? String == "example.com")
        #expect(stored?["ptcl"] as? String == "htps")
        #expect(stored?["port"] as? Int == 443)
        #expect(stored?["atyp"] as? String == "form")
        #expect(stored?["sdmn"] as? String == "corp")
        #expect(try https.allKeys() == ["alice"])
    }

    @Test func setUpdatesInPlaceNotDeleteThenAdd() throws {
        let keychain = memory.keychain(service: "s")
        try keychain.set("one", forKey: "k")
        let first = try #require(
            try memory.database.copyMatching(
                ItemQuery(.genericPassword, matching: [.account: .string("k")], returning: .persistentReference),
                caller: CallerIdentity(applicationIdentifier: "com.example.tests")
            ).first?.persistentReference)
        try keychain.set("two", forKey: "k")
        let second = try #require(
            try memory.database.copyMatching(
                ItemQuery(.genericPassword, matching: [.account: .string("k")], returning: .persistentReference),
                caller: CallerIdentity(applicationIdentifier: "com.example.tests")
            ).first?.persistentReference)
        #expect(!first.isEmpty)
        #expect(first == second, "updated in place: a delete-then-add would give a new item")
    }

    /// Atomicity where it shows: a reader on another connection to the same file, reading while `set`
    /// overwrites the value again and again, never finds the item missing (a delete-then-add would leave a
    /// moment with no item) and only ever sees a whole value.
    @Test func aReaderOnAnotherConnectionNeverSeesTheItemMissingDuringSet() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("atomic.keychain")
        let writer = try KeychainDatabase.create(at: path, passphrase: Passphrase("atomic"), keyDerivation: .minimum)
        let reader = try KeychainDatabase.open(at: path)
        try reader.unlock(with: Passphrase("atomic"))
        let keychain = Keychain(service: "s", connection: .database(writer, applicationIdentifier: "com.example.tests"))
        let observer = Keychain(service: "s", connection: .database(reader, applicationIdentifier: "com.example.tests"))
        try keychain.set("value-0", forKey: "k")
        let done = ManagedAtomicFlag()
        let reads = ReadTally()
        let ended = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { ended.signal() }
            while !done.isSet {
                do {
                    let value = try observer.string(forKey: "k")
                    reads.record(value)
                } catch {
                    reads.record(error: "\(error)")
                }
            }
        }
        thread.start()
        for index in 1...300 { try keychain.set("value-\(index)", forKey: "k") }
        done.set()
        #expect(ended.wait(timeout: .now() + 30) == .success, "the reader stopped")
        #expect(reads.missing == 0, "the item was missing during an upsert")
        #expect(reads.errors.isEmpty, "\(reads.errors.prefix(3))")
        #expect(reads.malformed == 0)
        #expect(reads.total > 0, "the reader read")
        print("KeychainValueTests: \(reads.total) reads during 300 upserts, \(reads.missing) missing")
    }
}

/// A flag set once, read from another thread.
final class ManagedAtomicFlag: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

/// What the reader thread saw.
final class ReadTally: @unchecked Sendable {
    // @unchecked: guarded by `lock`.
    private let lock = NSLock()
    private(set) var total = 0, missing = 0, malformed = 0
    private(set) var errors: [String] = []

    func record(_ value: String?) {
        lock.withLock {
            total += 1
            if value == nil { missing += 1 } else if !(value!.hasPrefix("value-")) { malformed += 1 }
        }
    }

    func record(error: String) { lock.withLock { errors.append(error) } }
}
