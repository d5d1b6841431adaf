internal import COpenSSL
import FoundationEssentials
import LatchkeyCrypto

// Key agreement: ECDH (`EVP_PKEY_derive`) and finite-field Diffie-Hellman's modular exponentiation.
extension OpenSSL {
    /// ECDH (`EVP_PKEY_derive`): the shared X coordinate of `key` (private) and `peer` (public).
    static func derive(_ key: PKeyHandle, peer: PKeyHandle) -> SecureBytes? {
        defer { latchkey_ERR_clear_error() }
        guard let context = latchkey_EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { return nil }
        defer { latchkey_EVP_PKEY_CTX_free(context) }
        var length = 0
        guard latchkey_EVP_PKEY_derive_init(context) == 1,
            latchkey_EVP_PKEY_derive_set_peer(context, peer.pointer) == 1,
            latchkey_EVP_PKEY_derive(context, nil, &length) == 1, length > 0
        else { return nil }
        return secureBytes(count: length, lifetime: .transient) { buffer in
            var written = length
            return latchkey_EVP_PKEY_derive(context, buffer.bindMemory(to: UInt8.self).baseAddress, &written) == 1
                && written == length
        }
    }

    /// `base` ^ `exponent` mod `modulus` (all big-endian), in constant time for the secret exponent, padded
    /// on the left to the modulus's length; nil when `base` is not in 2…modulus − 2 (a peer's public value
    /// of 0, 1 or p − 1 would give away the result).
    static func modularExponent(base: Data, exponent: SecureBytes, modulus: Data) -> SecureBytes? {
        defer { latchkey_ERR_clear_error() }
        guard let context = latchkey_BN_CTX_new() else { return nil }
        defer { latchkey_BN_CTX_free(context) }
        func number(_ bytes: Data) -> OpaquePointer? {
            bytes.withUnsafeBytes {
                latchkey_BN_bin2bn($0.bindMemory(to: UInt8.self).baseAddress, Int32($0.count), nil)
            }
        }
        guard let p = number(modulus), let g = number(base) else { return nil }
        defer {
            latchkey_BN_free(p)
            latchkey_BN_free(g)
        }
        let x = exponent.withUnsafeBytes {
            latchkey_BN_bin2bn($0.bindMemory(to: UInt8.self).baseAddress, Int32($0.count), nil)
        }
        guard let x, let result = latchkey_BN_new(), let limit = latchkey_BN_dup(p) else { return nil }
        defer {
            latchkey_BN_clear_free(x)
            latchkey_BN_clear_free(result)
            latchkey_BN_free(limit)
        }
        latchkey_BN_set_flags(x, BN_FLG_CONSTTIME)
        guard latchkey_BN_sub_word(limit, 1) == 1, latchkey_BN_cmp(g, latchkey_BN_value_one()) > 0,
            latchkey_BN_cmp(g, limit) < 0,
            latchkey_BN_mod_exp_mont_consttime(result, g, x, p, context, nil) == 1
        else { return nil }
        return secureBytes(count: modulus.count, lifetime: .transient) { buffer in
            latchkey_BN_bn2binpad(result, buffer.bindMemory(to: UInt8.self).baseAddress, Int32(buffer.count))
                == Int32(buffer.count)
        }
    }
}
