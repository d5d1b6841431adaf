import Foundation
import Latchkey
import LatchkeyStorage
import LatchkeyTestSupport
import Testing

@Suite(.dedicatedThreads) struct PassphraseChangeTests {
    let directory = TemporaryDirectory()

    func itemsTable(_ path: String) throws -> [Data] {
        let db = try Connection(path: path, mode: .readWrite)
        var rows: [Data] = []
        try db.forEachRow("SELECT id || item_key || attrs || coalesce(data, x'') FROM items ORDER BY row_id") {
            rows.append($0.blob(0) ?? Data())
        }
        return rows
    }

    @Test func theNewPassphraseOpensAndTheOldOneNoLongerDoes() throws {
        let path = directory.file("login.keychain")
        let keychain = try Fixture.newKeychain(in: directory, name: "login.keychain")
        for index in 0..<20 {
            try keychain.add(
                Fixture.password(service: "s", account: "\(index)", secret: "secret-\(index)"), caller: Fixture.app)
        }
        let before = try itemsTable(path)
        try keychain.changePassphrase(from: Passphrase(Fixture.passphrase), to: Passphrase("a new passphrase"))
        // Only the keybag was re-wrapped: not one byte of any item changed.
        #expect(try itemsTable(path) == before)

        let reopened = try KeychainDatabase.open(at: path)
        #expect(status { try reopened.unlock(with: Passphrase(Fixture.passphrase)) } == .authFailed)
        try reopened.unlock(with: Passphrase("a new passphrase"))
        #expect(
            try reopened.copyMatching(Fixture.query(service: "s", account: "7"), caller: Fixture.app).first?.data
                == Data("secret-7".utf8))
    }

    @Test func aWrongOldPassphraseChangesNothing() throws {
        let keychain = try Fixture.newKeychain(in: directory, name: "login.keychain")
        let before = try FileSnapshot(directory: directory.path, only: ["login.keychain"])
        #expect(
            status { try keychain.changePassphrase(from: Passphrase("guess"), to: Passphrase("new")) } == .authFailed)
        #expect(try FileSnapshot(directory: directory.path, only: ["login.keychain"]) == before)
        #expect(
            status { try keychain.changePassphrase(from: Passphrase(Fixture.passphrase), to: Passphrase("")) } == .param
        )
    }

    @Test func theKeyDerivationCanBeStrengthenedAtTheSameTime() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        #expect(try keychain.keyDerivation == .minimum)
        let stronger = KeyDerivation(passes: 3, memoryBytes: 32 << 20)
        try keychain.changePassphrase(
            from: Passphrase(Fixture.passphrase), to: Passphrase(Fixture.passphrase),
            keyDerivation: stronger)
        #expect(try keychain.keyDerivation == stronger)
        #expect(
            status {
                try keychain.changePassphrase(
                    from: Passphrase(Fixture.passphrase), to: Passphrase("x"),
                    keyDerivation: KeyDerivation(passes: 1, memoryBytes: 1 << 20))
            }
                == .param)
    }

    @Test func anotherProcessesKeysStayValidAfterAChange() throws {
        let path = directory.file("login.keychain")
        let first = try Fixture.newKeychain(in: directory, name: "login.keychain")
        let second = try KeychainDatabase.open(at: path)
        try second.unlock(with: Passphrase(Fixture.passphrase))
        try first.changePassphrase(from: Passphrase(Fixture.passphrase), to: Passphrase("rotated"))
        // The class keys did not change, so the already unlocked handle keeps working.
        try second.add(Fixture.password(service: "s", account: "after"), caller: Fixture.app)
        #expect(try first.copyMatching(Fixture.query(service: "s"), caller: Fixture.app).count == 1)
        second.lock()
        #expect(status { try second.unlock(with: Passphrase(Fixture.passphrase)) } == .authFailed)
        try second.unlock(with: Passphrase("rotated"))
    }

    @Test func settingsPersist() throws {
        let path = directory.file("login.keychain")
        let keychain = try Fixture.newKeychain(in: directory, name: "login.keychain")
        #expect(try keychain.settings == KeychainSettings())
        try keychain.updateSettings(KeychainSettings(autoLockAfterSeconds: 300))
        #expect(try KeychainDatabase.open(at: path).settings.autoLockAfterSeconds == 300)
        #expect(status { try keychain.updateSettings(KeychainSettings(autoLockAfterSeconds: 0)) } == .param)
        try keychain.updateSettings(KeychainSettings())
        #expect(try keychain.settings.autoLockAfterSeconds == nil)
    }
}
