import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// SEMANTICS.md §4, table-driven: which accessibility classes are available in which lock state.
@Suite(.dedicatedThreads) struct LockStateTests {
    let directory = TemporaryDirectory()

    /// (accessibility, available after lock, available before the first unlock with the device key)
    static let table: [(Accessibility, Bool, Bool)] = [
        (.whenUnlocked, false, false),
        (.whenUnlockedThisDeviceOnly, false, false),
        (.whenPasscodeSetThisDeviceOnly, false, false),
        (.afterFirstUnlock, true, false),
        (.afterFirstUnlockThisDeviceOnly, true, false),
        (.always, true, true),
        (.alwaysThisDeviceOnly, true, true),
    ]

    func item(_ accessibility: Accessibility, account: String = "a") -> NewItem {
        Fixture.password(
            service: accessibility.rawValue, account: account, secret: "v-\(accessibility.rawValue)",
            extra: [.accessible: .string(accessibility.rawValue)])
    }

    func read(_ keychain: KeychainDatabase, _ accessibility: Accessibility) -> KeychainStatus? {
        status { _ = try keychain.copyMatching(Fixture.query(service: accessibility.rawValue), caller: Fixture.app) }
    }

    @Test(arguments: table.indices)
    func availabilityFollowsTheLockState(_ index: Int) throws {
        let (accessibility, afterLock, beforeFirstUnlock) = Self.table[index]
        let path = directory.file("k\(index).keychain")
        let keychain = try KeychainDatabase.create(
            at: path, passphrase: Passphrase(Fixture.passphrase),
            keyDerivation: .minimum)
        #expect(keychain.lockState == .unlocked)
        try keychain.add(item(accessibility), caller: Fixture.app)
        #expect(read(keychain, accessibility) == nil)

        keychain.lock()
        #expect(keychain.lockState == .locked)
        #expect(read(keychain, accessibility) == (afterLock ? nil : .interactionNotAllowed))
        // Adding while the class key is unavailable fails, even when the add would be a duplicate.
        #expect(
            status { try keychain.add(item(accessibility), caller: Fixture.app) }
                == (afterLock ? .duplicateItem : .interactionNotAllowed))
        #expect(
            status {
                try keychain.update(
                    Fixture.query(service: accessibility.rawValue, returning: []),
                    with: ItemChanges(attributes: [.comment: .string("x")]), caller: Fixture.app)
            }
                == (afterLock ? nil : .interactionNotAllowed))

        let reopened = try KeychainDatabase.open(at: path)
        #expect(reopened.lockState == .neverUnlocked)
        #expect(read(reopened, accessibility) == (beforeFirstUnlock ? nil : .interactionNotAllowed))
        try reopened.unlock(with: Passphrase(Fixture.passphrase))
        #expect(reopened.lockState == .unlocked)
        #expect(read(reopened, accessibility) == nil)
    }

    @Test func aLockedItemAmongAvailableOnesFailsTheWholeQuery() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(Fixture.password(service: "mixed", account: "ak"), caller: Fixture.app)
        try keychain.add(
            Fixture.password(service: "mixed", account: "dk", extra: [.accessible: .string("dk")]),
            caller: Fixture.app)
        keychain.lock()
        #expect(
            status { _ = try keychain.copyMatching(Fixture.query(service: "mixed", limit: .all), caller: Fixture.app) }
                == .interactionNotAllowed)
        #expect(
            try keychain.copyMatching(Fixture.query(service: "mixed", account: "dk"), caller: Fixture.app).count == 1)
    }

    @Test func withoutTheDeviceKeyNothingIsReadableBeforeTheFirstUnlock() throws {
        let path = directory.file("nodevice.keychain")
        let keychain = try KeychainDatabase.create(
            at: path, passphrase: Passphrase(Fixture.passphrase),
            keyDerivation: .minimum)
        try keychain.add(item(.always), caller: Fixture.app)
        try FileManager.default.removeItem(atPath: path + ".device-key")
        let reopened = try KeychainDatabase.open(at: path)
        #expect(read(reopened, .always) == .interactionNotAllowed)
        // The passphrase keybag holds the device-tier keys too: nothing is lost with the device key file.
        try reopened.unlock(with: Passphrase(Fixture.passphrase))
        #expect(read(reopened, .always) == nil)
    }

    @Test func aWrongPassphraseIsAuthFailedAndKeepsTheState() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        keychain.lock()
        let failure = #expect(throws: KeychainError.self) { try keychain.unlock(with: Passphrase("wrong")) }
        #expect(failure?.status == .authFailed)
        #expect(failure?.message == "The user name or passphrase you entered is not correct.")
        #expect(keychain.lockState == .locked)
        #expect(status { try keychain.unlock(with: Passphrase("")) } == .authFailed)
    }

    @Test func lockAndUnlockRepeatedly() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(item(.whenUnlocked), caller: Fixture.app)
        for _ in 0..<3 {
            keychain.lock()
            #expect(read(keychain, .whenUnlocked) == .interactionNotAllowed)
            try keychain.unlock(with: Passphrase(Fixture.passphrase))
            #expect(read(keychain, .whenUnlocked) == nil)
        }
    }

    @Test func inMemoryKeychainsLockAndUnlockToo() throws {
        let keychain = KeychainDatabase.inMemory(passphrase: Passphrase("test"))
        try keychain.add(item(.whenUnlocked), caller: Fixture.app)
        keychain.lock()
        #expect(read(keychain, .whenUnlocked) == .interactionNotAllowed)
        #expect(status { try keychain.unlock(with: Passphrase("nope")) } == .authFailed)
        try keychain.unlock(with: Passphrase("test"))
        #expect(read(keychain, .whenUnlocked) == nil)
    }
}
