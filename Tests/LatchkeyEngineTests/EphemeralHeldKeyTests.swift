import Foundation
import Latchkey
import LatchkeyTestSupport
import Synchronization
import Testing

@testable import LatchkeyEngine

/// Ephemeral held keys (`HeldKeyRequest.isPermanent` false, Apple's non-permanent token keys): made and kept
/// in memory where the keychain runs, for the program that made them, never written to the file, and
/// destroyed when the keychain locks.
@Suite(.dedicatedThreads) struct EphemeralHeldKeyTests {
    let directory = TemporaryDirectory()
    static let ecdsa = KeyAlgorithm(rawValue: "algid:sign:ECDSA:message-X962:SHA256")

    func make(_ keychain: KeychainDatabase, caller: CallerIdentity = Fixture.app) throws -> ItemResult {
        try #require(
            try keychain.createHeldKey(
                HeldKeyRequest(
                    type: .ellipticCurve, bits: 256, attributes: [.label: .string("session")],
                    isPermanent: false),
                caller: caller, returning: [.attributes, .data]))
    }

    @Test func anEphemeralKeySignsForItsProgramAndIsNeverStored() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let made = try make(keychain)
        #expect(made.persistentReference.count == 32 && made.persistentReference.prefix(4) == Data("lke1".utf8))
        #expect(made.attributes[.tokenID] == .string(HeldKeyRequest.latchkeyTokenID))
        #expect(made.attributes[.label] == .string("session"))
        let publicKey = try AsymmetricKey(
            externalRepresentation: try #require(made.data), type: .ellipticCurve, isPrivate: false)
        let signature = try keychain.useHeldKey(
            made.persistentReference, for: .sign(Self.ecdsa, Data("m".utf8)), caller: Fixture.app)
        try publicKey.verify(Self.ecdsa, Data("m".utf8), signature: signature)
        // No item, and another program cannot use it.
        #expect(
            status { _ = try keychain.copyMatching(ItemQuery(.key, limit: .all), caller: Fixture.app) } == .itemNotFound
        )
        #expect(
            status {
                _ = try keychain.useHeldKey(
                    made.persistentReference, for: .sign(Self.ecdsa, Data()), caller: Fixture.other)
            }
                == .itemNotFound)
        // A made-up handle names nothing.
        var forged = made.persistentReference
        forged[31] ^= 1
        #expect(
            status { _ = try keychain.useHeldKey(forged, for: .sign(Self.ecdsa, Data()), caller: Fixture.app) }
                == .itemNotFound)
        // Nothing of it in the keychain's files.
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: directory.file(name)))
            #expect(bytes.range(of: publicKey.publicKeyData) == nil, "\(name)")
        }
    }

    @Test func lockingDestroysEphemeralKeysAndALockedKeychainMakesNone() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let made = try make(keychain)
        keychain.lock()
        #expect(
            status {
                _ = try keychain.useHeldKey(
                    made.persistentReference, for: .sign(Self.ecdsa, Data()), caller: Fixture.app)
            }
                == .interactionNotAllowed)
        #expect(status { _ = try make(keychain) } == .interactionNotAllowed)
        try keychain.unlock(with: Passphrase(Fixture.passphrase))
        #expect(
            status {
                _ = try keychain.useHeldKey(
                    made.persistentReference, for: .sign(Self.ecdsa, Data()), caller: Fixture.app)
            }
                == .itemNotFound)
    }

    @Test func theOldestGoesPastTheLimit() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let first = try make(keychain)
        for _ in 0..<KeyVault.ephemeralKeyLimit { _ = try make(keychain) }
        #expect(
            status {
                _ = try keychain.useHeldKey(
                    first.persistentReference, for: .sign(Self.ecdsa, Data()), caller: Fixture.app)
            }
                == .itemNotFound)
    }

    /// A key made for another process (as the agent makes one for a client) goes when that process ends:
    /// asked for, it is gone; the next key made sweeps every such key away.
    @Test func aKeyMadeForAProcessGoesWhenThatProcessEnds() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let ended = Mutex(false)
        let holderEnded: @Sendable () -> Bool = { ended.withLock { $0 } }
        func makeFor(_ holder: (@Sendable () -> Bool)?) throws -> ItemResult {
            try #require(
                try keychain.createHeldKey(
                    HeldKeyRequest(type: .ellipticCurve, bits: 256, isPermanent: false),
                    caller: Fixture.app, returning: [.data], holderEnded: holder))
        }
        let first = try makeFor(holderEnded)
        let second = try makeFor(holderEnded)
        let own = try makeFor(nil)
        _ = try keychain.useHeldKey(
            first.persistentReference, for: .sign(Self.ecdsa, Data("m".utf8)), caller: Fixture.app)
        #expect(keychain.vault.ephemeralKeyCount == 3)
        ended.withLock { $0 = true }
        #expect(
            status {
                _ = try keychain.useHeldKey(
                    first.persistentReference, for: .sign(Self.ecdsa, Data()), caller: Fixture.app)
            }
                == .itemNotFound)
        #expect(keychain.vault.ephemeralKeyCount == 2)
        _ = try makeFor(nil)
        #expect(keychain.vault.ephemeralKeyCount == 2)  // The second went with its process; this process's keys stay.
        #expect(
            status {
                _ = try keychain.useHeldKey(
                    second.persistentReference, for: .sign(Self.ecdsa, Data()), caller: Fixture.app)
            }
                == .itemNotFound)
        _ = try keychain.useHeldKey(
            own.persistentReference, for: .sign(Self.ecdsa, Data("m".utf8)), caller: Fixture.app)
    }

    /// `releaseHeldKey` forgets a key of the caller's program now; the last `HeldKey` of an ephemeral key
    /// releases it when it goes, as Apple frees a non-permanent key with its `SecKey`.
    @Test func anEphemeralKeyIsReleasedOnRequestAndWithItsLastHandle() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let first = try make(keychain)
        // Another program cannot release it; a stored key's reference is not released but deleted.
        #expect(
            status { try keychain.releaseHeldKey(first.persistentReference, caller: Fixture.other) } == .itemNotFound)
        let stored = try #require(
            try keychain.createHeldKey(
                HeldKeyRequest(type: .ellipticCurve, bits: 256), caller: Fixture.app,
                returning: [.persistentReference]))
        #expect(status { try keychain.releaseHeldKey(stored.persistentReference, caller: Fixture.app) } == .param)
        try keychain.releaseHeldKey(first.persistentReference, caller: Fixture.app)
        #expect(keychain.vault.ephemeralKeyCount == 0)
        #expect(
            status {
                _ = try keychain.useHeldKey(
                    first.persistentReference, for: .sign(Self.ecdsa, Data()), caller: Fixture.app)
            }
                == .itemNotFound)
        #expect(status { try keychain.releaseHeldKey(first.persistentReference, caller: Fixture.app) } == .itemNotFound)

        let service = LocalKeychainService(database: keychain, caller: Fixture.app)
        let made = try #require(
            try service.createHeldKey(
                HeldKeyRequest(type: .ellipticCurve, bits: 256, isPermanent: false),
                returning: [.attributes, .data]))
        do {
            let held = try HeldKey(result: made, service: service)
            _ = try held.sign(Self.ecdsa, Data("m".utf8))
            #expect(keychain.vault.ephemeralKeyCount == 1)
        }
        // The handle is gone: so is the key (once the release it queued has run).
        HeldKeyReleases.waitForPendingReleases()
        #expect(keychain.vault.ephemeralKeyCount == 0)
        #expect(
            status {
                _ = try keychain.useHeldKey(
                    made.persistentReference, for: .sign(Self.ecdsa, Data()), caller: Fixture.app)
            }
                == .itemNotFound)
        // A stored held key's handle going releases nothing.
        do {
            let storedHandle = try HeldKey(
                result: try #require(
                    try service.createHeldKey(
                        HeldKeyRequest(type: .ellipticCurve, bits: 256),
                        returning: [.attributes, .data])),
                service: service)
            _ = try storedHandle.sign(Self.ecdsa, Data("m".utf8))
        }
        HeldKeyReleases.waitForPendingReleases()
        #expect(try keychain.copyMatching(ItemQuery(.key, limit: .all), caller: Fixture.app).count == 2)
    }

    /// An ephemeral key is kept on this device as a stored one (a class that could leave is kept as its
    /// ThisDeviceOnly counterpart), and a size the type does not have is errSecParam.
    @Test func anEphemeralKeyIsKeptOnThisDeviceToo() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        let made = try keychain.createHeldKey(
            HeldKeyRequest(
                type: .ellipticCurve, bits: 256, attributes: [.accessible: .string("ak")], isPermanent: false),
            caller: Fixture.app, returning: [.attributes])
        #expect(made?.attributes[.accessible] == .string("aku"))
        #expect(
            status {
                _ = try keychain.createHeldKey(
                    HeldKeyRequest(type: .ellipticCurve, bits: 255, isPermanent: false), caller: Fixture.app)
            } == .param)
    }
}
