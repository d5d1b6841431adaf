import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

/// The key a passphrase derives, handed over in its place (pam_latchkey's early derivation, issue 56): it
/// opens the keychain as the passphrase does, under the KDF record it was derived with, and no other.
@Suite(.dedicatedThreads) struct DerivedUnlockKeyTests {
    let directory = TemporaryDirectory()

    @Test func theDerivedKeyOpensTheKeychainAsThePassphraseDoes() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try keychain.add(Fixture.password(service: "s", account: "a", secret: "the secret"), caller: Fixture.app)
        let key = try keychain.deriveUnlockKey(from: Passphrase(Fixture.passphrase))
        // Another handle, as the agent's is: deriving unlocked nothing.
        let reopened = try KeychainDatabase.open(at: directory.file("test.keychain"))
        #expect(reopened.lockState != .unlocked)
        // Through its bytes, as it travels (the tool's pipe, the agent's message).
        let copy = try #require(key.withEncoded { DerivedUnlockKey(encoded: $0) })
        try reopened.unlock(with: copy)
        #expect(reopened.lockState == .unlocked)
        #expect(
            try reopened.copyMatching(Fixture.query(service: "s", account: "a"), caller: Fixture.app).first?.data
                == Data("the secret".utf8))
    }

    @Test func aWrongPassphraseDerivesNoKey() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        #expect(status { _ = try keychain.deriveUnlockKey(from: Passphrase("not it")) } == .authFailed)
    }

    @Test func aKeyDerivedBeforeThePassphraseChangedIsRefused() throws {
        // The same passphrase set again: a new salt, so the old derivation no longer opens the keybag.
        let keychain = try Fixture.newKeychain(in: directory)
        let key = try keychain.deriveUnlockKey(from: Passphrase(Fixture.passphrase))
        try keychain.changePassphrase(from: Passphrase(Fixture.passphrase), to: Passphrase(Fixture.passphrase))
        let reopened = try KeychainDatabase.open(at: directory.file("test.keychain"))
        #expect(throws: KeychainError(.authFailed, "the key was derived under other key derivation settings")) {
            try reopened.unlock(with: key)
        }
        #expect(reopened.lockState != .unlocked)
        try reopened.unlock(with: Passphrase(Fixture.passphrase))
    }

    @Test func aKeyWithAnotherOutputUnderTheRightRecordIsRefused() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let key = try keychain.deriveUnlockKey(from: Passphrase(Fixture.passphrase))
        var bytes = key.withEncoded { Array($0) }
        defer { bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        bytes[40] ^= 0x01
        let altered = try #require(bytes.withUnsafeBytes { DerivedUnlockKey(encoded: $0) })
        let reopened = try KeychainDatabase.open(at: directory.file("test.keychain"))
        #expect(status { try reopened.unlock(with: altered) } == .authFailed)
        #expect(reopened.lockState != .unlocked)
    }

    @Test func onlyARecordThatDecodesAndItsOutputAreAKey() {
        let record: [UInt8] = [1] + Array(repeating: 0, count: 16) + Array(repeating: 7, count: 16)
        let output = [UInt8](repeating: 9, count: 32)
        #expect((record + output).withUnsafeBytes { DerivedUnlockKey(encoded: $0) } != nil)
        #expect((record + output.dropLast()).withUnsafeBytes { DerivedUnlockKey(encoded: $0) } == nil)
        #expect((record + output + [0]).withUnsafeBytes { DerivedUnlockKey(encoded: $0) } == nil)
        #expect(([9] + record.dropFirst() + output).withUnsafeBytes { DerivedUnlockKey(encoded: $0) } == nil)
    }
}
