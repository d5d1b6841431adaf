import Foundation
import Latchkey
import LatchkeyTestSupport
import Synchronization
import Testing

@testable import LatchkeyEngine

/// Ephemeral `kSecAttrTokenIDSecureEnclave` P-256 keys (`isPermanent` false) made inside the TPM (swtpm), as
/// Apple's are inside the Secure Enclave: the vault keeps only the TPM's wrapped object, the key signs what
/// OpenSSL verifies and derives what a software peer derives, says it lives in the TPM, and goes as any
/// ephemeral key goes (lock, release, its process ending); without a TPM it is held in software as before.
@Suite(.dedicatedThreads) struct TPMEphemeralKeyTests {
    let directory = TemporaryDirectory()

    func make(
        _ keychain: KeychainDatabase, holderEnded: (@Sendable () -> Bool)? = nil
    ) throws -> ItemResult {
        try #require(
            try keychain.createHeldKey(
                HeldKeyRequest(
                    type: .ellipticCurve, bits: 256,
                    attributes: [
                        .tokenID: .string(HeldKeyRequest.secureEnclaveTokenID), .label: .string("session"),
                    ],
                    isPermanent: false),
                caller: Fixture.app, returning: [.attributes, .data], holderEnded: holderEnded))
    }

    func sign(_ keychain: KeychainDatabase, _ made: ItemResult) -> KeychainStatus? {
        status { _ = try TPMKeyFixture.sign(keychain, made.persistentReference, Data("m".utf8)) }
    }

    @Test func anEphemeralKeyMadeInTheTPMSignsWhatOpenSSLVerifiesAndIsNeverStored() throws {
        let tpm = try SoftwareTPM()
        let keychain = try Fixture.newKeychain(in: directory)
        try TPMAddress.$scoped.withValue(tpm.tcti) {
            let made = try make(keychain)
            #expect(made.persistentReference.count == 32 && made.persistentReference.prefix(4) == Data("lke1".utf8))
            #expect(made.attributes[.label] == .string("session"))
            let publicKey = try TPMKeyFixture.expectMadeInTheTPMAndVerifiedByOpenSSL(made, keychain, directory)
            let message = Data("pay 10 to bob".utf8)

            // The vault keeps the TPM's wrapped object, no private key; no item is stored.
            #expect(keychain.vault.ephemeralKeyCount == 1)
            guard
                case .tpm(let form) = keychain.vault.ephemeralKey(
                    made.persistentReference, owner: Fixture.app.applicationIdentifier)
            else {
                Issue.record("the ephemeral key is not kept as the TPM's object")
                return
            }
            #expect(HeldKeyData.publicPart(form) == publicKey.publicKeyData)
            #expect(throws: KeychainError(.internal, "a TPM-made key's private key is in its TPM")) {
                try HeldKeyData.privateKey(form, type: .ellipticCurve)
            }
            #expect(
                status { _ = try keychain.copyMatching(ItemQuery(.key, limit: .all), caller: Fixture.app) }
                    == .itemNotFound)
            // Another program cannot use it.
            #expect(
                status {
                    _ = try keychain.useHeldKey(
                        made.persistentReference, for: .sign(TPMKeyFixture.ecdsa, message), caller: Fixture.other)
                } == .itemNotFound)
        }
    }

    @Test func ecdhInTheTPMAgreesWithASoftwarePeerAndECIESDecrypts() throws {
        let tpm = try SoftwareTPM()
        let keychain = try Fixture.newKeychain(in: directory)
        try TPMAddress.$scoped.withValue(tpm.tcti) {
            let made = try make(keychain)
            let publicKey = try TPMKeyFixture.publicKey(made)
            try TPMKeyFixture.expectECDHAgrees(keychain, made.persistentReference, publicKey)
            try TPMKeyFixture.expectECIESDecrypts(keychain, made.persistentReference, publicKey)
        }
    }

    @Test func lockingDestroysItAndALockedKeychainMakesNone() throws {
        let tpm = try SoftwareTPM()
        let keychain = try Fixture.newKeychain(in: directory)
        try TPMAddress.$scoped.withValue(tpm.tcti) {
            let made = try make(keychain)
            #expect(sign(keychain, made) == nil)
            keychain.lock()
            #expect(keychain.vault.ephemeralKeyCount == 0)
            #expect(sign(keychain, made) == .interactionNotAllowed)
            #expect(status { _ = try make(keychain) } == .interactionNotAllowed)
            try keychain.unlock(with: Passphrase(Fixture.passphrase))
            #expect(sign(keychain, made) == .itemNotFound)
        }
    }

    @Test func itGoesWhenReleasedOrWhenItsProcessEnds() throws {
        let tpm = try SoftwareTPM()
        let keychain = try Fixture.newKeychain(in: directory)
        try TPMAddress.$scoped.withValue(tpm.tcti) {
            let released = try make(keychain)
            try keychain.releaseHeldKey(released.persistentReference, caller: Fixture.app)
            #expect(sign(keychain, released) == .itemNotFound)
            #expect(
                status { try keychain.releaseHeldKey(released.persistentReference, caller: Fixture.app) }
                    == .itemNotFound)

            let ended = Mutex(false)
            let forAnother = try make(keychain) { ended.withLock { $0 } }
            #expect(forAnother.attributes[.keyStorage] == .string("tpm"))
            #expect(sign(keychain, forAnother) == nil)
            ended.withLock { $0 = true }
            #expect(sign(keychain, forAnother) == .itemNotFound)
            #expect(keychain.vault.ephemeralKeyCount == 0)
        }
    }

    @Test func withoutATPMItIsHeldInSoftwareAndWorksAsBefore() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try TPMAddress.$scoped.withValue(TPMKeyFixture.nowhere(directory)) {
            let made = try make(keychain)
            #expect(made.attributes[.keyStorage] == .string("software"))
            #expect(made.attributes[.tokenID] == .string(HeldKeyRequest.secureEnclaveTokenID))
            guard
                case .software = keychain.vault.ephemeralKey(
                    made.persistentReference, owner: Fixture.app.applicationIdentifier)
            else {
                Issue.record("the ephemeral key is not kept in software")
                return
            }
            let message = Data("no TPM".utf8)
            let signature = try TPMKeyFixture.sign(keychain, made.persistentReference, message)
            try TPMKeyFixture.publicKey(made).verify(TPMKeyFixture.ecdsa, message, signature: signature)
            keychain.lock()
            try keychain.unlock(with: Passphrase(Fixture.passphrase))
            #expect(sign(keychain, made) == .itemNotFound)
        }
    }
}
