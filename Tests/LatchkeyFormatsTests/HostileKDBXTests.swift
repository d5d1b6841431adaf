import Foundation
import LatchkeyEngine
import LatchkeyFormats
import Testing

/// Damaged and hostile KeePass databases are refused with a clear error, within a bound of memory and time:
/// truncations, changed bytes (the header's SHA-256, a block's HMAC), lengths past the end, and key
/// derivations asking for gigabytes or billions of rounds, refused before any work.
@Suite struct HostileKDBXTests {
    static let password = Passphrase("hostile")
    static let entries = [
        PasswordEntry(title: "One", username: "u", password: Data("p".utf8), url: "https://example.com")
    ]
    static let cheap = KDBXKeyDerivation.argon2(
        Argon2(variant: .d, iterations: 1, memoryKiB: 64, parallelism: 1), salt: [UInt8](repeating: 1, count: 32))

    static func file(_ derivation: KDBXKeyDerivation = cheap) throws -> [UInt8] {
        try KDBXWriter.write(
            name: "Hostile", entries: entries, password: password, keyFile: nil, keyDerivation: derivation
        ).bytes
    }

    func read(_ bytes: [UInt8]) throws -> KDBXDatabase {
        try KDBXDatabase.read(bytes, password: Self.password, keyFile: nil)
    }

    /// Where the header ends (its SHA-256 follows).
    func headerLength(_ bytes: [UInt8]) throws -> Int {
        var offset = 12
        while true {
            let type = bytes[offset]
            let length = Int(bytes[offset + 1]) | Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3]) << 16
            offset += 5 + length
            if type == 0 { return offset }
        }
    }

    @Test func everyTruncationIsRefused() throws {
        let bytes = try Self.file()
        #expect(try read(bytes).entries.count == 1)
        for length in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 150)) {
            #expect(throws: KeychainError.self) { try read(Array(bytes.prefix(length))) }
        }
    }

    @Test func aChangedHeaderOrBlockIsDamageNotAWrongPassword() throws {
        let bytes = try Self.file()
        let header = try headerLength(bytes)
        var seed = bytes
        seed[50] ^= 1  // The master seed.
        #expect(throws: KeychainError.decode("the database's header fails its SHA-256 check (the file is damaged)")) {
            try read(seed)
        }
        var block = bytes
        block[header + 64 + 32 + 4 + 5] ^= 1
        #expect(throws: KeychainError.decode("the database: block 0 fails its HMAC (the file is damaged)")) {
            try read(block)
        }
        #expect(throws: KeychainError(.authFailed, "wrong password or key file for the database")) {
            try KDBXDatabase.read(bytes, password: Passphrase("not it"), keyFile: nil)
        }
    }

    @Test func lengthsPastTheEndAreRefused() throws {
        let bytes = try Self.file()
        var field = bytes
        field.replaceSubrange(13..<17, with: [0xF0, 0xFF, 0xFF, 0xFF])
        #expect(throws: KeychainError.decode("the database is truncated: header field 2 at byte 17 runs past its end"))
        {
            try read(field)
        }
        let header = try headerLength(bytes)
        var block = bytes
        block.replaceSubrange(header + 96..<header + 100, with: [0xF0, 0xFF, 0xFF, 0x7F])
        #expect(
            throws: KeychainError.decode("the database is truncated: block 0 at byte \(header + 100) runs past its end")
        ) {
            try read(block)
        }
    }

    /// A KDBX 4 header asking for `derivation`, and a payload of nothing: what is read before any key work.
    static func header(_ derivation: KDBXKeyDerivation) -> [UInt8] {
        var bytes = KDBXHeader.signature + [0, 0, 4, 0]
        func field(_ type: UInt8, _ value: [UInt8]) {
            bytes.append(type)
            bytes += (0..<4).map { UInt8(truncatingIfNeeded: value.count >> ($0 * 8)) }
            bytes += value
        }
        field(2, KDBXHeader.aes256)
        field(3, [0, 0, 0, 0])
        field(4, [UInt8](repeating: 4, count: 32))
        field(7, [UInt8](repeating: 7, count: 16))
        field(11, derivation.variantMap.written())
        field(0, [13, 10, 13, 10])
        return bytes + [UInt8](repeating: 0, count: 64)
    }

    @Test func keyDerivationsBeyondTheLimitsAreRefusedBeforeAnyWork() throws {
        let salt = [UInt8](repeating: 1, count: 32)
        let cases: [(KDBXKeyDerivation, String)] = [
            (
                .argon2(Argon2(variant: .d, iterations: 1, memoryKiB: 8 << 20, parallelism: 1), salt: salt),
                "Argon2d, 8192 MiB, 1 iterations, 1 lanes; at most 1024 MiB of Argon2 memory are derived"
            ),
            (
                .argon2(Argon2(variant: .id, iterations: 100_000, memoryKiB: 1024, parallelism: 1), salt: salt),
                "Argon2id, 1 MiB, 100000 iterations, 1 lanes; at most 1000 iterations and 16 GiB of memory over all iterations are derived"
            ),
            (
                .argon2(Argon2(variant: .d, iterations: 100, memoryKiB: 1 << 20, parallelism: 4), salt: salt),
                "Argon2d, 1024 MiB, 100 iterations, 4 lanes; at most 1000 iterations and 16 GiB of memory over all iterations are derived"
            ),
            (
                .aes(rounds: 1 << 40, seed: [UInt8](repeating: 2, count: 32)),
                "AES-KDF, 1099511627776 rounds; at most 100000000 AES-KDF rounds are derived"
            ),
        ]
        let started = ContinuousClock.now
        for (derivation, message) in cases {
            #expect(throws: KeychainError.param("the database asks for a key derivation of \(message)")) {
                try read(Self.header(derivation))
            }
        }
        #expect(ContinuousClock.now - started < .seconds(1))
        // Parameters no Argon2 accepts are refused as such.
        var map = Self.cheap.variantMap
        map["V"] = .uint32(0x42)
        var bytes = Self.header(Self.cheap)
        let written = Self.cheap.variantMap.written()
        let at = bytes.firstRange(of: written)!.lowerBound
        let changed = map.written()
        bytes.replaceSubrange(at..<at + written.count, with: changed)
        #expect(throws: KeychainError.decode("the database asks for Argon2 version 66")) { try read(bytes) }
    }
}
