import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

@Suite(.dedicatedThreads) struct AEADTests {
    let key = SecureBytes(randomCount: AEAD.keyLength)
    let associated = Data("row-42".utf8)

    @Test func sealThenOpenReturnsThePlaintext() throws {
        let plaintext = Data("the secret".utf8)
        let box = AEAD.seal(plaintext, key: key, associatedData: associated)
        #expect(box.count == plaintext.count + AEAD.overhead)
        #expect(try AEAD.open(box, key: key, associatedData: associated) == plaintext)
    }

    @Test func everySealUsesAFreshNonce() {
        let plaintext = Data("same".utf8)
        #expect(AEAD.seal(plaintext, key: key, associatedData: associated)
            != AEAD.seal(plaintext, key: key, associatedData: associated))
    }

    @Test func anyFlippedByteFailsAuthentication() {
        let box = AEAD.seal(Data("the secret".utf8), key: key, associatedData: associated)
        for index in 0..<box.count {
            var damaged = box
            damaged[index] ^= 0x01
            #expect(throws: CryptoError.authenticationFailure) {
                try AEAD.open(damaged, key: key, associatedData: associated)
            }
        }
    }

    @Test func wrongAssociatedDataOrKeyFails() {
        let box = AEAD.seal(Data("x".utf8), key: key, associatedData: associated)
        #expect(throws: CryptoError.authenticationFailure) {
            try AEAD.open(box, key: key, associatedData: Data("row-43".utf8))
        }
        #expect(throws: CryptoError.authenticationFailure) {
            try AEAD.open(box, key: SecureBytes(randomCount: AEAD.keyLength), associatedData: associated)
        }
    }

    @Test func truncatedBoxIsRefused() {
        #expect(throws: CryptoError.truncated) {
            try AEAD.open(Data(count: AEAD.overhead - 1), key: key, associatedData: associated)
        }
    }

    @Test func wrappedKeysOpenIntoSecureBytes() throws {
        let inner = SecureBytes(randomCount: 32)
        let box = AEAD.seal(inner, key: key, associatedData: associated)
        let opened = try AEAD.openKey(box, key: key, associatedData: associated)
        #expect(opened.constantTimeEquals(inner))
    }

    @Test func errorsNeverCarryPlaintext() {
        #expect(CryptoError.authenticationFailure.description == "authentication failure")
    }
}
