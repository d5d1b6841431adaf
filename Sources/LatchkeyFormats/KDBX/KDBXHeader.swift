package import LatchkeyEngine

/// A KeePass database's outer header (KDBX 3.1 and 4): its version, cipher, compression, seeds, key
/// derivation and (3.1) the protected-stream settings, and the header's bytes, which the payload's checks
/// cover. Fields are a type byte, a length (16 bits in 3.x, 32 in 4) and the value, to type 0.
package struct KDBXHeader: Sendable {
    package enum Cipher: Sendable, Hashable {
        case aes256
        case chacha20
    }

    package static let signature: [UInt8] = [0x03, 0xD9, 0xA2, 0x9A, 0x67, 0xFB, 0x4B, 0xB5]
    package static let aes256: [UInt8] = uuid("31c1f2e6bf714350be5805216afc5aff")
    static let chacha20: [UInt8] = uuid("d6038a2b8b6f4cb5a524339a31dbb59a")
    static let twofish: [UInt8] = uuid("ad68f29f576f4bb9a36ad47af965346c")

    static func uuid(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
        }
    }

    package var major: UInt16
    package var minor: UInt16
    package var cipher: Cipher
    package var compressed: Bool
    package var masterSeed: [UInt8]
    package var encryptionIV: [UInt8]
    package var keyDerivation: KDBXKeyDerivation
    /// KDBX 3.1: the protected-stream key and cipher (2 Salsa20, 3 ChaCha20), and the payload's first bytes.
    package var protectedStreamKey: [UInt8] = []
    package var innerStream: UInt32 = 0
    package var streamStartBytes: [UInt8] = []
    /// The header's bytes, signature to end field included.
    package var bytes: ArraySlice<UInt8> = []

    package static func read(_ file: [UInt8], what: String) throws(KeychainError) -> KDBXHeader {
        guard file.starts(with: signature) else {
            throw KeychainError.decode("\(what) is not a KeePass database (KDBX)")
        }
        var reader = FieldReader(file, offset: 8, what: what)
        let minor = try reader.uint16LE("the version")
        let major = try reader.uint16LE("the version")
        guard major == 3 || major == 4 else {
            throw KeychainError.decode("\(what) is KDBX \(major).\(minor); KDBX 3.1 and 4 are read")
        }
        var cipher: Cipher?
        var compressed = false
        var masterSeed: [UInt8] = []
        var iv: [UInt8] = []
        var derivation: KDBXKeyDerivation?
        var transformSeed: [UInt8] = []
        var transformRounds: UInt64?
        var header = KDBXHeader(
            major: major, minor: minor, cipher: .aes256, compressed: false, masterSeed: [], encryptionIV: [],
            keyDerivation: .aes(rounds: 0, seed: []))
        while true {
            let type = try reader.byte("a header field's type")
            let length = Int(
                major == 3
                    ? UInt32(try reader.uint16LE("a header field's length"))
                    : try reader.uint32LE("a header field's length"))
            let value = try reader.take(length, "header field \(type)")
            switch type {
            case 0:
                guard let cipher else { throw KeychainError.decode("\(what) names no cipher") }
                header.cipher = cipher
                header.compressed = compressed
                guard masterSeed.count == 32 else { throw KeychainError.decode("\(what) has no 32-byte master seed") }
                header.masterSeed = masterSeed
                guard iv.count == (cipher == .chacha20 ? 12 : 16) else {
                    throw KeychainError.decode("\(what)'s encryption IV has \(iv.count) bytes")
                }
                header.encryptionIV = iv
                if major == 3 {
                    guard let transformRounds, transformSeed.count == 32 else {
                        throw KeychainError.decode("\(what) has no AES-KDF seed and rounds")
                    }
                    guard header.protectedStreamKey.count > 0, header.streamStartBytes.count == 32 else {
                        throw KeychainError.decode("\(what) lacks its protected-stream key or start bytes")
                    }
                    header.keyDerivation = .aes(rounds: transformRounds, seed: transformSeed)
                } else {
                    guard let derivation else { throw KeychainError.decode("\(what) has no KDF parameters") }
                    header.keyDerivation = derivation
                }
                header.bytes = file[0..<reader.offset]
                return header
            case 2:
                let id = Array(value)
                if id == aes256 {
                    cipher = .aes256
                } else if id == chacha20 {
                    cipher = .chacha20
                } else if id == twofish {
                    throw KeychainError.decode("\(what) is encrypted with Twofish, which Latchkey does not read")
                } else {
                    throw KeychainError.decode("\(what) is encrypted with an unknown cipher")
                }
            case 3:
                guard value.count == 4, value.allSatisfy({ $0 <= 1 }), value.dropFirst().allSatisfy({ $0 == 0 }) else {
                    throw KeychainError.decode("\(what) names an unknown compression")
                }
                compressed = value.first == 1
            case 4: masterSeed = Array(value)
            case 5 where major == 3: transformSeed = Array(value)
            case 6 where major == 3:
                guard value.count == 8 else { throw KeychainError.decode("\(what)'s AES-KDF rounds are not 8 bytes") }
                transformRounds = value.enumerated().reduce(0) { $0 | UInt64($1.element) << ($1.offset * 8) }
            case 7: iv = Array(value)
            case 8 where major == 3: header.protectedStreamKey = Array(value)
            case 9 where major == 3: header.streamStartBytes = Array(value)
            case 10 where major == 3:
                guard value.count == 4 else { throw KeychainError.decode("\(what)'s inner stream is not 4 bytes") }
                header.innerStream = value.enumerated().reduce(0) { $0 | UInt32($1.element) << ($1.offset * 8) }
            case 11 where major == 4:
                derivation = try KDBXKeyDerivation(
                    try VariantMap.read(value, what: "\(what)'s KDF parameters"), what: what)
            case 5, 6, 8, 9, 10:
                throw KeychainError.decode("\(what) has header field \(type), which KDBX \(major) does not")
            default: break  // A comment (1), public custom data (12), or a field of a later version: ignored.
            }
        }
    }
}
