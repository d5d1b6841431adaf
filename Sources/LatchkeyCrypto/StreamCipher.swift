/// The stream ciphers other programs' files are encrypted with (KeePass's KDBX: ChaCha20 for a version 4
/// database and its protected fields, Salsa20 for the protected fields of a version 3.1 one), on libsodium.
package enum StreamCipher: Sendable {
    /// ChaCha20 as RFC 8439 has it: a 12-byte nonce and a 32-bit block counter.
    case chacha20
    /// Salsa20: an 8-byte nonce and a 64-bit block counter.
    case salsa20

    /// The key's length in bytes (32 for both).
    package static let keyLength = 32
    /// A keystream block's length in bytes (64 for both).
    package static let blockLength = 64

    /// The nonce's length in bytes.
    package var nonceLength: Int {
        switch self {
        case .chacha20: 12
        case .salsa20: 8
        }
    }

    /// XORs `buffer` in place with the keystream of `key` and `nonce`, from block `blockCounter` on.
    package func xor(
        _ buffer: UnsafeMutableRawBufferPointer, key: SecureBytes, nonce: [UInt8], blockCounter: UInt64 = 0
    ) {
        precondition(key.count == Self.keyLength && nonce.count == nonceLength)
        key.withUnsafeBytes { key in
            nonce.withUnsafeBytes { nonce in
                switch self {
                case .chacha20:
                    precondition(blockCounter <= UInt64(UInt32.max))
                    Sodium.chacha20Xor(buffer, key: key, nonce: nonce, counter: UInt32(blockCounter))
                case .salsa20:
                    Sodium.salsa20Xor(buffer, key: key, nonce: nonce, counter: blockCounter)
                }
            }
        }
    }
}
