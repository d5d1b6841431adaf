import LatchkeyCrypto
package import LatchkeyEngine
import LatchkeyPKI

/// The keystream that hides a KeePass database's protected values inside its XML: each protected value's
/// bytes are XORed with the next bytes of one stream, in document order. Salsa20 (id 2) keyed with
/// SHA-256 of the stream key and a fixed nonce; ChaCha20 (id 3) keyed and nonced from SHA-512 of it.
package final class InnerStream {
    let cipher: StreamCipher
    let key: SecureBytes
    let nonce: [UInt8]
    var block: [UInt8] = []
    var used = 0
    var counter: UInt64 = 0

    static let salsa20Nonce: [UInt8] = [0xE8, 0x30, 0x09, 0x4B, 0x97, 0x20, 0x5D, 0x2A]

    package init(id: UInt32, key streamKey: [UInt8]) throws(KeychainError) {
        switch id {
        case 2:
            cipher = .salsa20
            key = streamKey.withUnsafeBytes { FormatPrimitives.sha256([$0]) }
            nonce = Self.salsa20Nonce
        case 3:
            cipher = .chacha20
            let digest = streamKey.withUnsafeBytes { FormatPrimitives.sha512([$0]) }
            key = digest.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<32])) }
            nonce = digest.withUnsafeBytes { Array($0[32..<44]) }
        default:
            throw KeychainError.decode(
                "the database's protected values use stream cipher \(id), not Salsa20 or ChaCha20")
        }
    }

    deinit { block.withUnsafeMutableBytes { wipeBytes($0) } }

    /// XORs `bytes` with the stream's next bytes.
    package func apply(_ bytes: inout [UInt8]) {
        for index in bytes.indices {
            if used == block.count {
                block = [UInt8](repeating: 0, count: 64 * 16)
                block.withUnsafeMutableBytes { cipher.xor($0, key: key, nonce: nonce, blockCounter: counter) }
                counter += 16
                used = 0
            }
            bytes[index] ^= block[used]
            used += 1
        }
    }
}
