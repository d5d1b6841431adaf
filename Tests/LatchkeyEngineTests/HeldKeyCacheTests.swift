import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@testable import LatchkeyEngine

/// The loaded private keys of held keys (`KeyVault.heldKey`): a key is loaded once and used again while
/// the keychain stays unlocked, only for the exact stored bytes it came from, never past a lock or its
/// item's deletion, and never instead of the item's access checks.
@Suite(.dedicatedThreads) struct HeldKeyCacheTests {
    let directory = TemporaryDirectory()
    static let ecdsa = KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256")

    func make(_ keychain: KeychainDatabase, label: String = "signing") throws -> ItemResult {
        try #require(
            try keychain.createHeldKey(
                HeldKeyRequest(type: .ellipticCurve, bits: 256, attributes: [.label: .string(label)]),
                caller: Fixture.app, returning: [.attributes, .data]))
    }

    func sign(_ keychain: KeychainDatabase, _ made: ItemResult, caller: CallerIdentity = Fixture.app) throws -> Data {
        try keychain.useHeldKey(made.persistentReference, for: .sign(Self.ecdsa, Data("m".utf8)), caller: caller)
    }

    @Test func aKeyIsLoadedOnceAndForgottenWhenTheKeychainLocks() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let made = try make(keychain)
        let publicKey = try AsymmetricKey(
            externalRepresentation: try #require(made.data), type: .ellipticCurve, isPrivate: false)
        #expect(keychain.vault.loadedHeldKeyCount == 0)
        for _ in 0..<3 { try publicKey.verify(Self.ecdsa, Data("m".utf8), signature: try sign(keychain, made)) }
        #expect(keychain.vault.loadedHeldKeyCount == 1)

        keychain.lock()
        #expect(keychain.vault.loadedHeldKeyCount == 0)
        #expect(status { _ = try sign(keychain, made) } == .interactionNotAllowed)
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        try publicKey.verify(Self.ecdsa, Data("m".utf8), signature: try sign(keychain, made))
        #expect(keychain.vault.loadedHeldKeyCount == 1)
    }

    @Test func aLoadedKeyStillAnswersOnlyToItsItemsCallers() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let made = try make(keychain)
        _ = try sign(keychain, made)
        #expect(status { _ = try sign(keychain, made, caller: Fixture.other) } == .itemNotFound)
    }

    @Test func deletingTheKeyForgetsItsLoadedPrivateHalf() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let made = try make(keychain)
        _ = try sign(keychain, made)
        #expect(
            try keychain.delete(ItemQuery(.key, persistentReference: made.persistentReference), caller: Fixture.app)
                == 1)
        #expect(keychain.vault.loadedHeldKeyCount == 0)
        #expect(status { _ = try sign(keychain, made) } == .itemNotFound)
    }

    @Test func aKeyIsUsedOnlyForTheBytesItCameFrom() throws {
        let vault = KeyVault()
        let reference = Data(repeating: 1, count: 32)
        let first = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let second = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        var loads = 0
        func load(_ key: AsymmetricKey) -> () throws(KeychainError) -> AsymmetricKey {
            {
                loads += 1
                return key
            }
        }

        #expect(try vault.heldKey(reference, stored: Data("A".utf8), load: load(first)) === first)
        #expect(try vault.heldKey(reference, stored: Data("A".utf8), load: load(second)) === first)
        #expect(loads == 1)
        // Other bytes under the same reference are loaded, not answered with the key of the first.
        #expect(try vault.heldKey(reference, stored: Data("B".utf8), load: load(second)) === second)
        #expect(loads == 2)
        // A load that fails remembers nothing and reports its error.
        #expect(
            status {
                _ = try vault.heldKey(Data(repeating: 2, count: 32), stored: Data("C".utf8)) {
                    () throws(KeychainError) in
                    throw KeychainError.decode("damaged")
                }
            } == .decode)
        #expect(vault.loadedHeldKeyCount == 1)
    }

    @Test func aKeyLoadedWhileTheKeychainLocksIsNotRemembered() throws {
        let vault = KeyVault()
        let key = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        let used = try vault.heldKey(Data(repeating: 1, count: 32), stored: Data("A".utf8)) {
            () throws(KeychainError) in
            vault.lock()  // Another thread locks between the read and the load.
            return key
        }
        #expect(used === key)
        #expect(vault.loadedHeldKeyCount == 0)
    }

    @Test func atMostSixtyFourKeysAreRemembered() throws {
        let vault = KeyVault()
        let key = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
        for index in 0..<100 {
            _ = try vault.heldKey(Data(repeating: UInt8(index), count: 32), stored: Data([UInt8(index)])) {
                () throws(KeychainError) in key
            }
        }
        #expect(vault.loadedHeldKeyCount == 64)
    }
}
