import Foundation
import LatchkeyCrypto
import LatchkeyEngine
import LatchkeyFormats
import Testing

/// Argon2d, Argon2i and Argon2id against RFC 9106's test vectors (section 5: 32 KiB, 3 passes, 4 lanes, a
/// secret and associated data), and Argon2id with one lane against libsodium's.
@Suite struct Argon2Tests {
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.filter { !$0.isWhitespace })
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
    }

    static let vectors: [(Argon2.Variant, String)] = [
        (.d, "51 2b 39 1b 6f 11 62 97 53 71 d3 09 19 73 42 94 f8 68 e3 be 39 84 f3 c1 a1 3a 4d b9 fa be 4a cb"),
        (.i, "c8 14 d9 d1 dc 7f 37 aa 13 f0 d7 7f 24 94 bd a1 c8 de 6b 01 6d d3 88 d2 99 52 a4 c4 67 2b 6c e8"),
        (.id, "0d 64 0d f5 8d 78 76 6c 08 c0 37 a3 4a 8b 53 c9 d0 1e f0 45 2d 75 b6 5e b5 25 20 e9 6b 01 e6 59"),
    ]

    @Test(arguments: vectors.indices) func rfc9106TestVectors(_ index: Int) throws {
        let (variant, expected) = Self.vectors[index]
        let argon2 = Argon2(variant: variant, iterations: 3, memoryKiB: 32, parallelism: 4)
        let password = [UInt8](repeating: 1, count: 32)
        let salt = [UInt8](repeating: 2, count: 16)
        let secret = [UInt8](repeating: 3, count: 8)
        let associated = [UInt8](repeating: 4, count: 12)
        let tag = try password.withUnsafeBytes { password in
            try salt.withUnsafeBytes { salt in
                try secret.withUnsafeBytes { secret in
                    try associated.withUnsafeBytes { associated in
                        try argon2.derive(password: password, salt: salt, secret: secret, associatedData: associated)
                    }
                }
            }
        }
        #expect(tag.withUnsafeBytes { Array($0) } == Self.hex(expected))
    }

    /// One lane and no secret: what libsodium's crypto_pwhash computes (Argon2id 1.3), also for long tags
    /// (H' chained past 64 bytes) and a memory that is not a multiple of four blocks per lane.
    @Test(arguments: [(32, 64 * 1024, 2), (100, 1024, 3), (64, 1000, 1)])
    func oneLaneArgon2idIsLibsodiums(tagLength: Int, memoryKiB: Int, iterations: Int) throws {
        let password = Array("correct horse".utf8)
        let salt = [UInt8](repeating: 7, count: 16)
        let ours = try password.withUnsafeBytes { password in
            try salt.withUnsafeBytes { salt in
                try Argon2(variant: .id, iterations: UInt32(iterations), memoryKiB: UInt32(memoryKiB), parallelism: 1)
                    .derive(password: password, salt: salt, tagLength: tagLength)
            }
        }
        let theirs = try PasswordKDF.deriveKey(
            passphrase: SecureBytes(copying: password), salt: Data(salt),
            parameters: KDFParameters(passes: UInt64(iterations), memoryBytes: UInt64(memoryKiB) << 10),
            length: tagLength)
        #expect(ours.withUnsafeBytes { Array($0) } == theirs.withUnsafeBytes { Array($0) })
    }

    @Test func parametersOutsideTheSpecificationAreRefused() throws {
        let salt = [UInt8](repeating: 7, count: 16)
        func derive(_ argon2: Argon2, salt: [UInt8] = salt, tagLength: Int = 32) throws {
            _ = try salt.withUnsafeBytes { salt in
                try argon2.derive(
                    password: UnsafeRawBufferPointer(start: nil, count: 0), salt: salt, tagLength: tagLength)
            }
        }
        #expect(throws: KeychainError.param("Argon2 needs at least 8 KiB per lane, not 15 KiB for 2")) {
            try derive(Argon2(variant: .d, iterations: 1, memoryKiB: 15, parallelism: 2))
        }
        #expect(throws: KeychainError.param("Argon2's parallelism is 1 to 16777215, not 0")) {
            try derive(Argon2(variant: .d, iterations: 1, memoryKiB: 64, parallelism: 0))
        }
        #expect(throws: KeychainError.param("Argon2 needs at least one iteration")) {
            try derive(Argon2(variant: .d, iterations: 0, memoryKiB: 64, parallelism: 1))
        }
        #expect(throws: KeychainError.param("Argon2's salt has at least 8 bytes, not 4")) {
            try derive(Argon2(variant: .d, iterations: 1, memoryKiB: 64, parallelism: 1), salt: [1, 2, 3, 4])
        }
        #expect(throws: KeychainError.param("an Argon2 tag of 8 bytes is not supported (16 to 1024)")) {
            try derive(Argon2(variant: .d, iterations: 1, memoryKiB: 64, parallelism: 1), tagLength: 8)
        }
    }
}
