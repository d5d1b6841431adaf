import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@testable import LatchkeyEngine

/// `kSecAttrTokenIDSecureEnclave` P-256 keys made inside the TPM (swtpm): they sign what OpenSSL verifies,
/// derive what a software peer derives, decrypt ECIES, hand out only their public point, say where they
/// live (`lkst`), and keep working across lock, unlock and reopen.
@Suite(.dedicatedThreads) struct TPMKeyTests {
    let directory = TemporaryDirectory()

    @Test func aKeyMadeInTheTPMSignsWhatOpenSSLVerifies() throws {
        let tpm = try SoftwareTPM()
        let keychain = try Fixture.newKeychain(in: directory)
        try TPMAddress.$scoped.withValue(tpm.tcti) {
            let made = try TPMKeyFixture.make(keychain)
            let publicKey = try TPMKeyFixture.expectMadeInTheTPMAndVerifiedByOpenSSL(made, keychain, directory)
            let message = Data("pay 10 to bob".utf8)

            // Every ECDSA form Apple names: other digests (longer ones truncated, shorter ones as numbers),
            // a digest given, and RFC 4754's r‖s.
            let digest = Data((0..<32).map { UInt8($0) })
            let forms: [(String, Data)] = [
                ("algid:sign:ECDSA:message-X962:SHA384", message), ("algid:sign:ECDSA:message-X962:SHA512", message),
                ("algid:sign:ECDSA:message-X962:SHA1", message), ("algid:sign:ECDSA:message-X962:SHA224", message),
                ("algid:sign:ECDSA:digest-X962:SHA256", digest),
                ("algid:sign:ECDSA:digest-X962", Data(digest.prefix(20))),
                ("algid:sign:ECDSA:RFC4754", digest),
            ]
            for (name, input) in forms {
                let algorithm = KeyAlgorithm(rawValue: name)
                let signed = try keychain.useHeldKey(
                    made.persistentReference, for: .sign(algorithm, input), caller: Fixture.app)
                try publicKey.verify(algorithm, input, signature: signed)
                if name.hasSuffix("RFC4754") { #expect(signed.count == 64) }
            }
            // A digest of the wrong length is refused as for any key.
            #expect(throws: KeychainError(.param, "a SHA256 digest is 32 bytes, not 20")) {
                try keychain.useHeldKey(
                    made.persistentReference,
                    for: .sign(KeyAlgorithm(rawValue: "algid:sign:ECDSA:digest-X962:SHA256"), Data(count: 20)),
                    caller: Fixture.app)
            }
        }
    }

    @Test func ecdhInTheTPMAgreesWithASoftwarePeerAndECIESDecrypts() throws {
        let tpm = try SoftwareTPM()
        let keychain = try Fixture.newKeychain(in: directory)
        try TPMAddress.$scoped.withValue(tpm.tcti) {
            let made = try TPMKeyFixture.make(keychain)
            let publicKey = try TPMKeyFixture.publicKey(made)
            let peer = try TPMKeyFixture.expectECDHAgrees(keychain, made.persistentReference, publicKey)
            let x963 = KeyAlgorithm(rawValue: "algid:keyexchange:ECDH:KDFX963:SHA256")
            let parameters = KeyOperationParameters(requestedSize: 48, sharedInfo: Data("context".utf8))
            let derived = try keychain.useHeldKey(
                made.persistentReference, for: .keyExchange(x963, peerPublicKey: peer.publicKeyData, parameters),
                caller: Fixture.app)
            #expect(derived == (try peer.keyExchange(x963, with: publicKey, parameters: parameters)))

            // A peer on another curve, and a point that is none, are errSecParam as for any key.
            let other = try AsymmetricKey.generate(.ellipticCurve, bits: 384)
            #expect(throws: KeychainError(.param, "the peer's key is not on this key's curve")) {
                try keychain.useHeldKey(
                    made.persistentReference,
                    for: .keyExchange(x963, peerPublicKey: other.publicKeyData, parameters), caller: Fixture.app)
            }

            try TPMKeyFixture.expectECIESDecrypts(keychain, made.persistentReference, publicKey)
        }
    }

    @Test func theKeyGivesOnlyItsPublicPointAndTheItemOnlyTheTPMsObject() throws {
        let tpm = try SoftwareTPM()
        let keychain = try Fixture.newKeychain(in: directory)
        try TPMAddress.$scoped.withValue(tpm.tcti) {
            let made = try TPMKeyFixture.make(keychain)
            let publicKey = try TPMKeyFixture.publicKey(made)
            let found = try keychain.copyMatching(
                ItemQuery(.key, matching: [.keyStorage: .string("tpm")], returning: [.data, .attributes]),
                caller: Fixture.app)
            #expect(found.map(\.data) == [publicKey.publicKeyData])
            #expect(found.first?.attributes[.keyStorage] == .string("tpm"))
            let stored = try TPMKeyFixture.stored(keychain, made.persistentReference)
            #expect(HeldKeyData.isTPM(stored))
            #expect(throws: KeychainError(.internal, "a TPM-made key's private key is in its TPM")) {
                try HeldKeyData.privateKey(stored, type: .ellipticCurve)
            }
            let (primaryName, object) = try HeldKeyData.tpmObject(stored)
            #expect(primaryName.count == 34)  // SHA-256 nameAlg (2 bytes) and the digest
            #expect(!object.public.isEmpty && !object.private.isEmpty)

            // Nobody writes the attribute but the keychain.
            #expect(
                throws: KeychainError(
                    .param, "lkst (where a held key lives) is set by the keychain on the keys it holds")
            ) {
                try keychain.add(
                    NewItem(
                        .key,
                        attributes: [
                            .keyClass: .number(1), .keyStorage: .string("tpm"), .applicationTag: TPMKeyFixture.tag,
                        ],
                        data: publicKey.publicKeyData), caller: Fixture.app)
            }
            #expect(
                throws: KeychainError(
                    .param, "lkst (where a held key lives) is set by the keychain on the keys it holds")
            ) {
                try keychain.update(
                    ItemQuery(.key, matching: [.applicationTag: TPMKeyFixture.tag]),
                    with: ItemChanges(attributes: [.keyStorage: .string("software")]), caller: Fixture.app)
            }
        }
    }

    @Test func theKeySurvivesLockUnlockAndReopen() throws {
        let tpm = try SoftwareTPM()
        let path = directory.file("test.keychain")
        try TPMAddress.$scoped.withValue(tpm.tcti) {
            let reference: Data
            let publicKey: AsymmetricKey
            do {
                let keychain = try Fixture.newKeychain(in: directory)
                let made = try TPMKeyFixture.make(keychain)
                reference = made.persistentReference
                publicKey = try TPMKeyFixture.publicKey(made)
                keychain.lock()
                #expect(throws: KeychainError.self) { try TPMKeyFixture.sign(keychain, reference, Data("locked".utf8)) }
                try keychain.unlock(with: Passphrase(Fixture.passphrase))
                let signature = try TPMKeyFixture.sign(keychain, reference, Data("unlocked".utf8))
                try publicKey.verify(TPMKeyFixture.ecdsa, Data("unlocked".utf8), signature: signature)
            }
            let reopened = try KeychainDatabase.open(at: path)
            try reopened.unlock(with: Passphrase(Fixture.passphrase))
            // The TPM restarts in between, as a reboot would: the key loads from its blob again.
            tpm.stop()
            try tpm.start()
            let signature = try TPMKeyFixture.sign(reopened, reference, Data("reopened".utf8))
            try publicKey.verify(TPMKeyFixture.ecdsa, Data("reopened".utf8), signature: signature)
        }
    }

    @Test func accessControlGuardsTheTPMKeyAsAnyHeldKey() throws {
        let tpm = try SoftwareTPM()
        let keychain = try Fixture.newKeychain(in: directory)
        try TPMAddress.$scoped.withValue(tpm.tcti) {
            let control = AccessControl(
                protection: .whenUnlockedThisDeviceOnly, flags: [.privateKeyUsage, .userPresence])
            let made = try TPMKeyFixture.make(keychain, extra: [.accessControl: control.attributeValue])
            #expect(made.attributes[.keyStorage] == .string("tpm"))
            let message = Data("with the user".utf8)
            let cancel = AccessControlTests.ScriptedPresence(.cancel)
            #expect(throws: KeychainError(.userCanceled, "scripted cancel")) {
                try keychain.useHeldKey(
                    made.persistentReference, for: .sign(TPMKeyFixture.ecdsa, message), caller: Fixture.app,
                    presence: cancel)
            }
            let confirm = AccessControlTests.ScriptedPresence(.passphrase(Fixture.passphrase))
            let signature = try keychain.useHeldKey(
                made.persistentReference, for: .sign(TPMKeyFixture.ecdsa, message), caller: Fixture.app,
                presence: confirm)
            #expect(confirm.count == 1)
            try TPMKeyFixture.publicKey(made).verify(TPMKeyFixture.ecdsa, message, signature: signature)
        }
    }

    @Test func otherSizesWithTheSecureEnclaveTokenAreHeldInSoftwareAsBefore() throws {
        let tpm = try SoftwareTPM()
        let keychain = try Fixture.newKeychain(in: directory)
        try TPMAddress.$scoped.withValue(tpm.tcti) {
            let made = try TPMKeyFixture.make(keychain, bits: 384)
            #expect(made.attributes[.keyStorage] == .string("software"))
            #expect(!HeldKeyData.isTPM(try TPMKeyFixture.stored(keychain, made.persistentReference)))
            // The agent's own token is software too, whatever the size.
            let agent = try #require(
                try keychain.createHeldKey(
                    HeldKeyRequest(
                        type: .ellipticCurve, bits: 256, attributes: [.applicationTag: .data(Data("a".utf8))]),
                    caller: Fixture.app, returning: [.attributes]))
            #expect(agent.attributes[.keyStorage] == .string("software"))
            #expect(agent.attributes[.tokenID] == .string(HeldKeyRequest.latchkeyTokenID))
            // An ephemeral one of another size is kept in memory too (a P-256 one is the TPM's: TPMEphemeralKeyTests).
            let ephemeral = try #require(
                try keychain.createHeldKey(
                    HeldKeyRequest(
                        type: .ellipticCurve, bits: 384,
                        attributes: [.tokenID: .string(HeldKeyRequest.secureEnclaveTokenID)], isPermanent: false),
                    caller: Fixture.app, returning: [.attributes]))
            #expect(ephemeral.attributes[.keyStorage] == .string("software"))
            // A size EC does not have is errSecParam, as before.
            #expect(throws: KeychainError.self) {
                try TPMKeyFixture.make(keychain, tag: .data(Data("b".utf8)), bits: 300)
            }
        }
    }
}
