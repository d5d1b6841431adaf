internal import COpenSSL
import FoundationEssentials
import LatchkeyCrypto

// PEM keys: writing a public key or an encrypted private key, reading any key block, and the cost of an encrypted one.
extension OpenSSL {
    /// The bytes a memory BIO holds, in a zeroizing buffer (they may be a private key).
    private static func contents(of bio: OpaquePointer) -> SecureBytes? {
        var data: UnsafeMutablePointer<CChar>?
        let count = latchkey_bio_contents(bio, &data)
        guard count > 0, let data else { return nil }
        return SecureBytes(copying: UnsafeRawBufferPointer(start: data, count: count))
    }

    /// `PEM_write_bio_PUBKEY`: "-----BEGIN PUBLIC KEY-----" (SubjectPublicKeyInfo).
    static func publicKeyPEM(_ key: PKeyHandle) -> SecureBytes? {
        defer { latchkey_ERR_clear_error() }
        guard let bio = latchkey_BIO_new(latchkey_BIO_s_mem()) else { return nil }
        defer { latchkey_BIO_free(bio) }
        guard latchkey_PEM_write_bio_PUBKEY(bio, key.pointer) == 1 else { return nil }
        return contents(of: bio)
    }

    /// `PEM_write_bio_PKCS8PrivateKey` with AES-256-CBC: "-----BEGIN ENCRYPTED PRIVATE KEY-----".
    static func encryptedPrivateKeyPEM(_ key: PKeyHandle, passphrase: String) -> SecureBytes? {
        defer { latchkey_ERR_clear_error() }
        guard let bio = latchkey_BIO_new(latchkey_BIO_s_mem()) else { return nil }
        defer { latchkey_BIO_free(bio) }
        let written = passphrase.withCString { pass in
            latchkey_PEM_write_bio_PKCS8PrivateKey(
                bio, key.pointer, latchkey_EVP_aes_256_cbc(), nil, 0, Self.passphraseCallback,
                UnsafeMutableRawPointer(mutating: pass))
        }
        guard written == 1 else { return nil }
        return contents(of: bio)
    }

    /// The `pem_password_cb` Latchkey gives OpenSSL: copies the caller's passphrase (`context`, a C string)
    /// and never asks anyone; an empty passphrase or one too long for the buffer is no passphrase.
    private static let passphraseCallback:
        @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32 = {
            buffer, size, _, context in
            guard let buffer, let context else { return 0 }
            let source = context.assumingMemoryBound(to: CChar.self)
            var length = 0
            while source[length] != 0 { length += 1 }
            guard length > 0, length <= Int(size) else { return 0 }
            buffer.update(from: source, count: length)
            return Int32(length)
        }

    /// One PEM key block: a public key ("PUBLIC KEY") or a private key ("PRIVATE KEY", "EC PRIVATE KEY",
    /// "RSA PRIVATE KEY", or "ENCRYPTED PRIVATE KEY" with `passphrase`). Nil when it is none of them or the
    /// passphrase does not open it.
    static func readKeyPEM(_ pem: Data, passphrase: String) -> (key: PKeyHandle, isPrivate: Bool)? {
        defer { latchkey_ERR_clear_error() }
        return pem.withUnsafeBytes { raw -> (PKeyHandle, Bool)? in
            guard let base = raw.baseAddress, raw.count > 0, raw.count < Int(Int32.max) else { return nil }
            guard let bio = latchkey_BIO_new_mem_buf(base, Int32(raw.count)) else { return nil }
            defer { latchkey_BIO_free(bio) }
            // Never OpenSSL's default callback, which would ask on the terminal: the passphrase comes from the
            // caller or there is none.
            return passphrase.withCString { pass -> (PKeyHandle, Bool)? in
                let given = UnsafeMutableRawPointer(mutating: pass)
                if let key = latchkey_PEM_read_bio_PUBKEY(bio, nil, Self.passphraseCallback, given) {
                    return (PKeyHandle(key), false)
                }
                _ = latchkey_BIO_ctrl(bio, BIO_CTRL_RESET, 0, nil)  // BIO_reset: back to the start of the buffer.
                return latchkey_PEM_read_bio_PrivateKey(bio, nil, Self.passphraseCallback, given).map {
                    (PKeyHandle($0), true)
                }
            }
        }
    }

    /// Why decrypting the PEM "ENCRYPTED PRIVATE KEY" block `pem` would cost too much, or nil (also when it is
    /// not one: reading it says what is wrong).
    static func encryptedKeyCostExcess(_ pem: Data) -> String? {
        defer { latchkey_ERR_clear_error() }
        return pem.withUnsafeBytes { raw -> String? in
            guard let base = raw.baseAddress, raw.count > 0, raw.count < Int(Int32.max),
                let bio = latchkey_BIO_new_mem_buf(base, Int32(raw.count))
            else { return nil }
            defer { latchkey_BIO_free(bio) }
            guard let signature = latchkey_PEM_read_bio_PKCS8(bio, nil, nil, nil) else { return nil }
            defer { latchkey_X509_SIG_free(signature) }
            var algorithm: UnsafePointer<X509_ALGOR>?
            latchkey_X509_SIG_get0(signature, &algorithm, nil)
            return PasswordCost.excess(algorithm, "the encrypted private key")
        }
    }
}
