internal import COpenSSL
import FoundationEssentials
import LatchkeyCrypto

// RSA encryption and decryption (PKCS #1 v1.5, OAEP or none).
extension OpenSSL {
    /// RSA encryption with PKCS #1 v1.5 or OAEP padding, or none (the input then a whole block below the
    /// modulus).
    static func rsaEncrypt(_ key: PKeyHandle, _ plaintext: Data, padding: RSAPadding) -> Data? {
        defer { latchkey_ERR_clear_error() }
        guard let context = latchkey_EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { return nil }
        defer { latchkey_EVP_PKEY_CTX_free(context) }
        guard latchkey_EVP_PKEY_encrypt_init(context) == 1,
            configure(context, digest: nil, padding: padding, signing: false)
        else { return nil }
        var out = [UInt8](repeating: 0, count: maximumOutput(key))
        var length = out.count
        let ok = plaintext.withUnsafeBytes { raw in
            latchkey_EVP_PKEY_encrypt(context, &out, &length, raw.bindMemory(to: UInt8.self).baseAddress, raw.count)
                == 1
        }
        return ok ? Data(out.prefix(length)) : nil
    }

    /// RSA decryption; nil when the padding does not check.
    static func rsaDecrypt(_ key: PKeyHandle, _ ciphertext: Data, padding: RSAPadding) -> SecureBytes? {
        defer { latchkey_ERR_clear_error() }
        guard let context = latchkey_EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { return nil }
        defer { latchkey_EVP_PKEY_CTX_free(context) }
        guard latchkey_EVP_PKEY_decrypt_init(context) == 1,
            configure(context, digest: nil, padding: padding, signing: false)
        else { return nil }
        let scratch = SecureBytes(count: maximumOutput(key), lifetime: .transient) { _ in }
        var length = scratch.count
        let ok = scratch.withUnsafeBytes { out in
            ciphertext.withUnsafeBytes { raw in
                latchkey_EVP_PKEY_decrypt(
                    context, UnsafeMutablePointer(mutating: out.bindMemory(to: UInt8.self).baseAddress), &length,
                    raw.bindMemory(to: UInt8.self).baseAddress, raw.count) == 1
            }
        }
        guard ok else { return nil }
        return scratch.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0.prefix(length))) }
    }
}
