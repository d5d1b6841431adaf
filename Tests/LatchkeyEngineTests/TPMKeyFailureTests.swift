import Foundation
import Latchkey
import LatchkeyTestSupport
import Testing

@testable import LatchkeyEngine

/// What goes wrong with keys made inside the TPM reaches the caller as an Apple status naming the TPM's
/// cause, and loses nothing: another TPM (another machine), a garbled blob, a TPM that vanishes mid-call,
/// no TPM at all (then the key is held in memory as before), an enrolled keychain whose TPM is gone.
@Suite(.dedicatedThreads) struct TPMKeyFailureTests {
    let directory = TemporaryDirectory()

    @Test func anotherTPMCannotUseTheKey() throws {
        let tpm = try SoftwareTPM()
        let other = try SoftwareTPM()
        let keychain = try Fixture.newKeychain(in: directory)
        let made = try TPMAddress.$scoped.withValue(tpm.tcti) { try TPMKeyFixture.make(keychain) }
        TPMAddress.$scoped.withValue(other.tcti) {
            let expected = KeychainError(
                .notAvailable,
                "the key was made inside another TPM than the one at \(other.tcti) (another machine, or this TPM was cleared): only the TPM that made it can use it"
            )
            #expect(throws: expected) { try TPMKeyFixture.sign(keychain, made.persistentReference, Data("m".utf8)) }
        }
        // The key is intact: its own TPM still signs.
        let signature = try TPMAddress.$scoped.withValue(tpm.tcti) {
            try TPMKeyFixture.sign(keychain, made.persistentReference, Data("m".utf8))
        }
        try TPMKeyFixture.publicKey(made).verify(TPMKeyFixture.ecdsa, Data("m".utf8), signature: signature)
    }

    @Test func aGarbledBlobIsErrSecDecodeAndTheItemStays() throws {
        let tpm = try SoftwareTPM()
        let keychain = try Fixture.newKeychain(in: directory)
        try TPMAddress.$scoped.withValue(tpm.tcti) {
            let made = try TPMKeyFixture.make(keychain)
            let stored = try TPMKeyFixture.stored(keychain, made.persistentReference)
            // Items as `createHeldKey` would store them, but with a flipped byte in the TPM's private area
            // (its encrypted sensitive part), and cut short.
            var flipped = stored
            flipped[flipped.endIndex - 20] ^= 0x40
            let truncated = Data(stored.dropLast(3))
            var references: [Data] = []
            for (index, data) in [flipped, truncated].enumerated() {
                var item = NewItem(
                    .key,
                    attributes: made.attributes.filter {
                        ![.creationDate, .modificationDate, .accessGroup].contains($0.key)
                    }
                    .merging([.applicationTag: .data(Data("garbled \(index)".utf8))]) { _, new in new },
                    data: data)
                item.isHeldKey = true
                references.append(
                    try #require(try keychain.add(item, caller: Fixture.app, returning: [.persistentReference]))
                        .persistentReference)
            }
            #expect {
                try TPMKeyFixture.sign(keychain, references[0], Data("m".utf8))
            } throws: { error in
                let failure = try #require(error as? KeychainError)
                return failure.status == .decode
                    && failure.detail?.hasPrefix("the TPM-made key's object is damaged (loading the sealed object: ")
                        == true
            }
            #expect(throws: KeychainError.decode("a TPM-made key's data is damaged (its TPM object is malformed)")) {
                try TPMKeyFixture.sign(keychain, references[1], Data("m".utf8))
            }
            let peer = try AsymmetricKey.generate(.ellipticCurve, bits: 256)
            #expect {
                try keychain.useHeldKey(
                    references[0],
                    for: .keyExchange(
                        KeyAlgorithm(rawValue: "algid:keyexchange:ECDH"), peerPublicKey: peer.publicKeyData,
                        KeyOperationParameters()), caller: Fixture.app)
            } throws: { error in (error as? KeychainError)?.status == .decode }
            // Nothing is lost: every item is still listed and the intact key still signs.
            let listed = try keychain.copyMatching(
                ItemQuery(.key, matching: [.keyStorage: .string("tpm")], limit: .all, returning: [.attributes]),
                caller: Fixture.app)
            #expect(listed.count == 3)
            #expect(try tpm.lockoutState().failedTries == 0)
            _ = try TPMKeyFixture.sign(keychain, made.persistentReference, Data("m".utf8))
        }
    }

    /// The TPM stops answering at each command of a signature in turn: every try either signs or fails with
    /// errSecNotAvailable naming the TPM, and the key signs afterwards.
    @Test func aTPMThatVanishesMidCallIsErrSecNotAvailable() throws {
        let tpm = try SoftwareTPM()
        let keychain = try Fixture.newKeychain(in: directory)
        let made = try TPMAddress.$scoped.withValue(tpm.tcti) { try TPMKeyFixture.make(keychain) }
        let publicKey = try TPMKeyFixture.publicKey(made)
        let logs = TemporaryDirectory()
        var succeeded = false
        var failures = 0
        for cut in 1...24 where !succeeded {
            let (proxy, tcti) = try TPMKeyFixture.proxy(tpm, cut: cut, log: logs.file("proxy-\(cut).log"))
            defer { proxy.stop() }
            do {
                let signature = try TPMAddress.$scoped.withValue(tcti) {
                    try TPMKeyFixture.sign(keychain, made.persistentReference, Data("m".utf8))
                }
                try publicKey.verify(TPMKeyFixture.ecdsa, Data("m".utf8), signature: signature)
                succeeded = true
            } catch let error as KeychainError {
                failures += 1
                #expect(error.status == .notAvailable, "cut \(cut): \(error)")
                #expect(
                    error.detail?.hasPrefix("the key lives in a TPM, and no TPM answers at \(tcti) (") == true,
                    "cut \(cut): \(error)")
                #expect(error.detail?.hasSuffix("; set LATCHKEY_TPM_TCTI to the TPM that made it") == true)
            }
        }
        #expect(succeeded)
        #expect(failures >= 6)  // The connection's commands, the load and the signature itself.
        let signature = try TPMAddress.$scoped.withValue(tpm.tcti) {
            try TPMKeyFixture.sign(keychain, made.persistentReference, Data("after".utf8))
        }
        try publicKey.verify(TPMKeyFixture.ecdsa, Data("after".utf8), signature: signature)
    }

    @Test func withoutATPMTheKeyIsHeldInSoftwareAndSaysSo() throws {
        let keychain = try Fixture.newKeychain(in: directory)
        try TPMAddress.$scoped.withValue(TPMKeyFixture.nowhere(directory)) {
            let made = try TPMKeyFixture.make(keychain)
            #expect(made.attributes[.tokenID] == .string(HeldKeyRequest.secureEnclaveTokenID))
            #expect(made.attributes[.keyStorage] == .string("software"))
            let stored = try TPMKeyFixture.stored(keychain, made.persistentReference)
            #expect(HeldKeyData.isHeld(stored) && !HeldKeyData.isTPM(stored))
            let signature = try TPMKeyFixture.sign(keychain, made.persistentReference, Data("m".utf8))
            try TPMKeyFixture.publicKey(made).verify(TPMKeyFixture.ecdsa, Data("m".utf8), signature: signature)
        }
    }

    @Test func anEnrolledKeychainMakesItsKeysInItsOwnTPMOnly() throws {
        let tpm = try SoftwareTPM()
        let keychain = try Fixture.newKeychain(in: directory)
        try TPMAddress.$scoped.withValue(tpm.tcti) {
            _ = try keychain.enrollTPM(passphrase: Passphrase(Fixture.passphrase))
            let made = try TPMKeyFixture.make(keychain)
            #expect(made.attributes[.keyStorage] == .string("tpm"))
            let (primaryName, _) = try HeldKeyData.tpmObject(
                try TPMKeyFixture.stored(keychain, made.persistentReference))
            #expect(primaryName == (try keychain.readKeyMeta().tpm?.primaryName))
        }
        // Its TPM gone, a new key is refused rather than made in software.
        TPMAddress.$scoped.withValue(TPMKeyFixture.nowhere(directory)) {
            #expect {
                try TPMKeyFixture.make(keychain, tag: .data(Data("second".utf8)))
            } throws: { error in
                let failure = try #require(error as? KeychainError)
                return failure.status == .notAvailable
                    && failure.detail?.hasPrefix(
                        "the key lives in a TPM, and no TPM answers at \(TPMKeyFixture.nowhere(directory)) (") == true
            }
        }
        // Another TPM is not its own either.
        let other = try SoftwareTPM()
        TPMAddress.$scoped.withValue(other.tcti) {
            #expect {
                try TPMKeyFixture.make(keychain, tag: .data(Data("third".utf8)))
            } throws: { error in
                (error as? KeychainError)?.status == .notAvailable
                    && (error as? KeychainError)?.reason == "tpm.wrongTPM"
            }
        }
    }
}
