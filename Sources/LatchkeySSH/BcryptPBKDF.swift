package import FoundationEssentials
package import LatchkeyCrypto
import LatchkeyPKI

/// OpenBSD's bcrypt_pbkdf, the key derivation of OpenSSH's encrypted key files (`openssh-key-v1`, kdf
/// `bcrypt`): no C library of Debian's offers it (OpenSSL and libsodium do not), so it is written here from
/// its description — PBKDF2's structure with SHA-512 of the passphrase and salt fed to a bcrypt hash
/// (Blowfish's expensive key schedule, eksblowfish, then 64 encryptions of "OxychromaticBlowfishSwatDynamite"),
/// and the output bytes spread across the blocks instead of laid one block after another.
package enum BcryptPBKDF {
    /// The most rounds a key file may ask for: each costs about as much as a 64-round bcrypt hash per
    /// output block, so a hostile file cannot make an import take minutes (ssh-keygen's default is 16).
    package static let maximumRounds = 1_024

    /// Derives `length` bytes (1 to 1024) from `passphrase` and `salt` (1 to 1024 bytes) with `rounds` (≥ 1).
    package static func derive(passphrase: SecureBytes, salt: Data, rounds: Int, length: Int) -> SecureBytes? {
        guard rounds >= 1, length >= 1, length <= 1_024, !salt.isEmpty, salt.count <= 1_024 else { return nil }
        let hashLength = 32
        let stride = (length + hashLength - 1) / hashLength
        let amount = (length + stride - 1) / stride
        let sha2pass = passphrase.withUnsafeBytes { raw in
            var copy = Data(raw)
            var digest = MessageDigest.sha512.hash(copy)
            defer {
                copy.resetBytes(in: 0..<copy.count)
                digest.resetBytes(in: 0..<digest.count)
            }
            return digest.withUnsafeBytes { SecureBytes(copying: $0) }
        }
        let state = Eksblowfish()
        defer { state.wipe() }
        return SecureBytes(count: length) { key in
            var count: UInt32 = 1
            var remaining = length
            var block = [UInt8](repeating: 0, count: hashLength)
            var output = [UInt8](repeating: 0, count: hashLength)
            defer {
                for index in 0..<hashLength {
                    block[index] = 0
                    output[index] = 0
                }
            }
            while remaining > 0 {
                var counted = salt
                counted.append(contentsOf: [
                    UInt8(count >> 24), UInt8(count >> 16 & 0xFF), UInt8(count >> 8 & 0xFF), UInt8(count & 0xFF),
                ])
                var sha2salt = [UInt8](MessageDigest.sha512.hash(counted))
                sha2pass.withUnsafeBytes { pass in state.hash(pass: pass, salt: sha2salt, into: &block) }
                output = block
                for _ in 1..<rounds {
                    sha2salt = [UInt8](MessageDigest.sha512.hash(Data(block)))
                    sha2pass.withUnsafeBytes { pass in state.hash(pass: pass, salt: sha2salt, into: &block) }
                    for index in 0..<hashLength { output[index] ^= block[index] }
                }
                // Spread the block's bytes over the key: byte i of block `count` goes to i * stride + count − 1.
                var written = 0
                while written < min(amount, remaining) {
                    let destination = written * stride + Int(count - 1)
                    if destination >= length { break }
                    key[destination] = output[written]
                    written += 1
                }
                remaining -= written
                count += 1
            }
        }
    }
}

/// Blowfish's state, keyed the expensive way (eksblowfish) as bcrypt does: the P-array (18 words) then the
/// four S-boxes (4 × 256), in one buffer of its own — the schedule runs some 70,000 block encryptions per
/// hash, so it works on the raw words — wiped when released.
private final class Eksblowfish {
    private let words = UnsafeMutablePointer<UInt32>.allocate(capacity: 18 + 1_024)
    private var s: UnsafeMutablePointer<UInt32> { words + 18 }

    deinit {
        words.update(repeating: 0, count: 18 + 1_024)
        words.deallocate()
    }

    func wipe() { words.update(repeating: 0, count: 18 + 1_024) }

    /// bcrypt's hash of SHA-512(passphrase) and SHA-512(salt): 32 bytes, its words little-endian.
    func hash(pass: UnsafeRawBufferPointer, salt: [UInt8], into output: inout [UInt8]) {
        BlowfishDigitsOfPi.p.withUnsafeBufferPointer { words.update(from: $0.baseAddress!, count: 18) }
        BlowfishDigitsOfPi.s.withUnsafeBufferPointer { s.update(from: $0.baseAddress!, count: 1_024) }
        salt.withUnsafeBytes { saltBytes in
            expand(data: saltBytes, key: pass)
            for _ in 0..<64 {
                expand(data: nil, key: saltBytes)
                expand(data: nil, key: pass)
            }
        }
        var text: [UInt32] = Array("OxychromaticBlowfishSwatDynamite".utf8).withUnsafeBytes { raw in
            var position = 0
            return (0..<8).map { _ in Self.word(raw, &position) }
        }
        for _ in 0..<64 {
            for block in 0..<4 {
                var (left, right) = (text[2 * block], text[2 * block + 1])
                encipher(&left, &right)
                (text[2 * block], text[2 * block + 1]) = (left, right)
            }
        }
        for (index, word) in text.enumerated() {
            output[4 * index] = UInt8(word & 0xFF)
            output[4 * index + 1] = UInt8(word >> 8 & 0xFF)
            output[4 * index + 2] = UInt8(word >> 16 & 0xFF)
            output[4 * index + 3] = UInt8(word >> 24)
        }
        for index in text.indices { text[index] = 0 }
    }

    /// The next big-endian word of `bytes`, read cyclically.
    static func word(_ bytes: UnsafeRawBufferPointer, _ position: inout Int) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            if position >= bytes.count { position = 0 }
            value = value << 8 | UInt32(bytes[position])
            position += 1
        }
        return value
    }

    /// Blowfish's key schedule with `key`, and with `data` mixed into each encryption when given (eksblowfish's
    /// ExpandKey(state, salt, key); without data, ExpandKey(state, 0, key)).
    func expand(data: UnsafeRawBufferPointer?, key: UnsafeRawBufferPointer) {
        var position = 0
        for index in 0..<18 { words[index] ^= Self.word(key, &position) }
        var dataPosition = 0
        var left: UInt32 = 0
        var right: UInt32 = 0
        var index = 0
        while index < 18 + 1_024 {
            if let data {
                left ^= Self.word(data, &dataPosition)
                right ^= Self.word(data, &dataPosition)
            }
            encipher(&left, &right)
            words[index] = left
            words[index + 1] = right
            index += 2
        }
    }

    /// One Blowfish block encryption (16 rounds).
    @inline(__always)
    func encipher(_ left: inout UInt32, _ right: inout UInt32) {
        let p = words
        let s = self.s
        @inline(__always) func f(_ x: UInt32) -> UInt32 {
            ((s[Int(x >> 24)] &+ s[256 + Int(x >> 16 & 0xFF)]) ^ s[512 + Int(x >> 8 & 0xFF)]) &+ s[768 + Int(x & 0xFF)]
        }
        var l = left ^ p[0]
        var r = right
        var round = 1
        while round <= 16 {
            r ^= f(l) ^ p[round]
            l ^= f(r) ^ p[round + 1]
            round += 2
        }
        left = r ^ p[17]
        right = l
    }
}
