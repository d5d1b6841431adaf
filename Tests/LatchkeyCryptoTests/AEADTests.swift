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
        #expect(
            AEAD.seal(plaintext, key: key, associatedData: associated)
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

    @Test func errorsNeverCarryPlaintextKeysOrAssociatedData() {
        let plaintext = Data("CANARY-plaintext-7f3a".utf8)
        let box = AEAD.seal(plaintext, key: key, associatedData: associated)
        var tampered = box
        tampered[tampered.count - 1] ^= 1
        let keyBytes = key.withUnsafeBytes { Data($0) }
        let failures: [(String, () throws -> Void)] = [
            ("tampered", { _ = try AEAD.open(tampered, key: self.key, associatedData: self.associated) }),
            (
                "wrong key",
                {
                    _ = try AEAD.open(
                        box, key: SecureBytes(randomCount: AEAD.keyLength), associatedData: self.associated)
                }
            ),
            ("wrong associated data", { _ = try AEAD.open(box, key: self.key, associatedData: Data("row-43".utf8)) }),
            (
                "truncated",
                { _ = try AEAD.open(box.prefix(AEAD.overhead - 1), key: self.key, associatedData: self.associated) }
            ),
            ("wrapped key", { _ = try AEAD.openKey(tampered, key: self.key, associatedData: self.associated) }),
        ]
        for (name, attempt) in failures {
            do {
                try attempt()
                Issue.record("\(name): opened")
            } catch {
                // Every rendering of the error: none holds the plaintext, the key, or the associated data.
                for text in [
                    String(describing: error), String(reflecting: error), "\(error)", error.localizedDescription,
                ] {
                    #expect(!text.contains("CANARY"), "\(name): \(text)")
                    #expect(!text.contains("row-42"), "\(name): \(text)")
                    #expect(text.utf8.count < 100, "\(name): a short fixed message, not bytes: \(text)")
                    #expect(Data(text.utf8).range(of: keyBytes.prefix(8)) == nil, "\(name)")
                }
                #expect(
                    ["authentication failure", "sealed data is truncated"].contains(String(describing: error)),
                    "\(name): \(error)")
            }
        }
    }
}
