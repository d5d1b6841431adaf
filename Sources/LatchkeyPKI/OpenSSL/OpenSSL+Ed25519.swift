internal import COpenSSL
import FoundationEssentials
import LatchkeyCrypto

// Ed25519 keys (EVP's raw keys): import, generation, export.
extension OpenSSL {
    /// An Ed25519 public key from its 32 bytes.
    static func importEd25519Public(_ bytes: Data) -> PKeyHandle? {
        defer { latchkey_ERR_clear_error() }
        guard bytes.count == 32 else { return nil }
        return bytes.withUnsafeBytes { raw in
            latchkey_EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, raw.bindMemory(to: UInt8.self).baseAddress, 32)
                .map(
                    PKeyHandle.init)
        }
    }

    /// `EVP_PKEY_ED25519`.
    static func isEd25519(_ key: PKeyHandle) -> Bool { latchkey_EVP_PKEY_get_base_id(key.pointer) == EVP_PKEY_ED25519 }

    /// A new random Ed25519 key.
    static func generateEd25519() -> PKeyHandle? {
        defer { latchkey_ERR_clear_error() }
        guard let context = latchkey_EVP_PKEY_CTX_new_from_name(nil, "ED25519", nil) else { return nil }
        defer { latchkey_EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard latchkey_EVP_PKEY_keygen_init(context) == 1, latchkey_EVP_PKEY_generate(context, &key) == 1, let key
        else { return nil }
        return PKeyHandle(key)
    }

    /// An Ed25519 private key from its 32-byte seed (RFC 8032's private key).
    static func importEd25519Private(_ seed: SecureBytes) -> PKeyHandle? {
        defer { latchkey_ERR_clear_error() }
        guard seed.count == 32 else { return nil }
        return seed.withUnsafeBytes { raw in
            latchkey_EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, raw.bindMemory(to: UInt8.self).baseAddress, 32)
                .map(
                    PKeyHandle.init)
        }
    }

    /// An Ed25519 key's 32-byte public key.
    static func ed25519PublicBytes(_ key: PKeyHandle) -> Data? {
        defer { latchkey_ERR_clear_error() }
        var bytes = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard latchkey_EVP_PKEY_get_raw_public_key(key.pointer, &bytes, &length) == 1, length == 32 else { return nil }
        return Data(bytes)
    }

    /// An Ed25519 private key's 32-byte seed; nil for a public key.
    static func ed25519Seed(_ key: PKeyHandle) -> SecureBytes? {
        defer { latchkey_ERR_clear_error() }
        var length = 0
        guard latchkey_EVP_PKEY_get_raw_private_key(key.pointer, nil, &length) == 1, length == 32 else { return nil }
        return secureBytes(count: 32) { buffer in
            var written = 32
            return latchkey_EVP_PKEY_get_raw_private_key(
                key.pointer, buffer.bindMemory(to: UInt8.self).baseAddress, &written)
                == 1 && written == 32
        }
    }
}
