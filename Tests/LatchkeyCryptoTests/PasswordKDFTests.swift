import Foundation
import LatchkeyCrypto
import LatchkeyTestSupport
import Testing

@Suite(.dedicatedThreads) struct PasswordKDFTests {
    let salt = Data(repeating: 7, count: PasswordKDF.saltLength)

    @Test func derivationIsDeterministicAndDependsOnEveryInput() throws {
        let passphrase = SecureBytes(copying: Array("correct horse".utf8))
        let a = try PasswordKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: .floor)
        let b = try PasswordKDF.deriveKey(passphrase: passphrase, salt: salt, parameters: .floor)
        #expect(a.constantTimeEquals(b))
        let otherSalt = try PasswordKDF.deriveKey(
            passphrase: passphrase, salt: Data(repeating: 8, count: PasswordKDF.saltLength), parameters: .floor)
        #expect(!a.constantTimeEquals(otherSalt))
        let otherPassphrase = try PasswordKDF.deriveKey(
            passphrase: SecureBytes(copying: Array("correct horsf".utf8)), salt: salt, parameters: .floor)
        #expect(!a.constantTimeEquals(otherPassphrase))
        let otherCost = try PasswordKDF.deriveKey(
            passphrase: passphrase, salt: salt, parameters: KDFParameters(passes: 3, memoryBytes: 19 << 20))
        #expect(!a.constantTimeEquals(otherCost))
    }

    @Test func boundsAreTheDocumentedOnes() {
        #expect(KDFParameters.default == KDFParameters(passes: 3, memoryBytes: 64 << 20))
        #expect(KDFParameters.floor == KDFParameters(passes: 2, memoryBytes: 19 << 20))
        #expect(KDFParameters.default.isWithinBounds)
        #expect(KDFParameters.floor.isWithinBounds)
        #expect(!KDFParameters(passes: 1, memoryBytes: 64 << 20).isWithinBounds)
        #expect(!KDFParameters(passes: 3, memoryBytes: 8 << 20).isWithinBounds)
        #expect(!KDFParameters(passes: 3, memoryBytes: 8 << 30).isWithinBounds)
        #expect(KDFParameters.default.description == "Argon2id, 64 MiB, 3 passes")
    }

    @Test func keyedDigestsDependOnTheKey() {
        let message = Data("acct=alice".utf8)
        let k1 = SecureBytes(randomCount: KeyedDigest.keyLength)
        let k2 = SecureBytes(randomCount: KeyedDigest.keyLength)
        #expect(KeyedDigest.digest(message, key: k1) == KeyedDigest.digest(message, key: k1))
        #expect(KeyedDigest.digest(message, key: k1) != KeyedDigest.digest(message, key: k2))
        #expect(KeyedDigest.digest(message, key: k1, length: 16).count == 16)
    }
}
