internal import COpenSSL
import FoundationEssentials
import LatchkeyCrypto

// AES in CBC mode with or without PKCS #7 padding at 128 or 256 bits, and AES-256-ECB applied in rounds: what
// other programs' files are encrypted with (GNOME Keyring's keyring files, KeePass's KDBX and its AES-KDF).
extension OpenSSL {
    /// AES-CBC under a 16- or 32-byte key and a 16-byte IV, with PKCS #7 padding or (`padding` false) on whole
    /// blocks; nil for other sizes, input that is not whole blocks without padding, or a wrong padding.
    static func aesCBC(encrypt: Bool, key: SecureBytes, iv: Data, input: UnsafeRawBufferPointer, padding: Bool)
        -> SecureBytes?
    {
        defer { latchkey_ERR_clear_error() }
        let cipher: OpaquePointer?
        switch key.count {
        case 16: cipher = latchkey_EVP_aes_128_cbc()
        case 32: cipher = latchkey_EVP_aes_256_cbc()
        default: return nil
        }
        guard iv.count == 16, padding || input.count % 16 == 0, let context = latchkey_EVP_CIPHER_CTX_new() else {
            return nil
        }
        defer { latchkey_EVP_CIPHER_CTX_free(context) }
        let initialize = encrypt ? latchkey_EVP_EncryptInit_ex : latchkey_EVP_DecryptInit_ex
        let keyed = key.withUnsafeBytes { raw in
            iv.withUnsafeBytes { vector in
                initialize(
                    context, cipher, nil, raw.bindMemory(to: UInt8.self).baseAddress,
                    vector.bindMemory(to: UInt8.self).baseAddress) == 1
            }
        }
        guard keyed, latchkey_EVP_CIPHER_CTX_set_padding(context, padding ? 1 : 0) == 1 else { return nil }
        let update = encrypt ? latchkey_EVP_EncryptUpdate : latchkey_EVP_DecryptUpdate
        let finish = encrypt ? latchkey_EVP_EncryptFinal_ex : latchkey_EVP_DecryptFinal_ex
        var produced = 0
        // Room for the input and one block of padding; the result is then cut to what was produced.
        guard
            let whole = secureBytes(
                count: input.count + 16, lifetime: .transient,
                { buffer in
                    let out = buffer.bindMemory(to: UInt8.self).baseAddress
                    var written: Int32 = 0
                    var offset = 0
                    // EVP_*Update takes an int length: feed the input in pieces well below it.
                    while offset < input.count {
                        let piece = min(input.count - offset, 1 << 30)
                        guard
                            update(
                                context, out.map { $0 + offset }, &written,
                                input.baseAddress!.assumingMemoryBound(to: UInt8.self) + offset, Int32(piece)) == 1
                        else { return false }
                        produced += Int(written)
                        offset += piece
                    }
                    var final: Int32 = 0
                    guard finish(context, out.map { $0 + produced }, &final) == 1 else { return false }
                    produced += Int(final)
                    return true
                })
        else { return nil }
        if produced == whole.count { return whole }
        return whole.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0.prefix(produced))) }
    }

    /// Encrypts `block` (32 bytes: two AES blocks) `rounds` times with AES-256-ECB under `key` (32 bytes):
    /// KeePass's AES-KDF before its final SHA-256. Nil for other sizes.
    static func aesECBRounds(key: SecureBytes, block: SecureBytes, rounds: UInt64) -> SecureBytes? {
        defer { latchkey_ERR_clear_error() }
        guard key.count == 32, block.count == 32, let context = latchkey_EVP_CIPHER_CTX_new() else { return nil }
        defer { latchkey_EVP_CIPHER_CTX_free(context) }
        let keyed = key.withUnsafeBytes { raw in
            latchkey_EVP_EncryptInit_ex(
                context, latchkey_EVP_aes_256_ecb(), nil, raw.bindMemory(to: UInt8.self).baseAddress, nil) == 1
        }
        guard keyed, latchkey_EVP_CIPHER_CTX_set_padding(context, 0) == 1 else { return nil }
        return secureBytes(count: 32) { buffer in
            let out = buffer.bindMemory(to: UInt8.self).baseAddress!
            block.withUnsafeBytes { buffer.copyMemory(from: $0) }
            var written: Int32 = 0
            var round: UInt64 = 0
            while round < rounds {
                // In place: ECB reads each block before it writes it.
                guard latchkey_EVP_EncryptUpdate(context, out, &written, out, 32) == 1, written == 32 else {
                    return false
                }
                round += 1
            }
            return true
        }
    }

    /// SHA-256 of `parts`, then of that digest again, `iterations` times in all: GNOME Keyring's key for a
    /// keyring file (`egg_symkey_generate_simple`). Nil for no iterations.
    static func iteratedSHA256(_ parts: [UnsafeRawBufferPointer], iterations: UInt32) -> SecureBytes? {
        defer { latchkey_ERR_clear_error() }
        guard iterations >= 1, let context = latchkey_EVP_MD_CTX_new() else { return nil }
        defer { latchkey_EVP_MD_CTX_free(context) }
        return secureBytes(count: 32) { buffer in
            let digest = buffer.bindMemory(to: UInt8.self).baseAddress!
            var length: UInt32 = 0
            guard latchkey_EVP_DigestInit_ex(context, latchkey_EVP_sha256(), nil) == 1 else { return false }
            for part in parts where part.count > 0 {
                guard latchkey_EVP_DigestUpdate(context, part.baseAddress, part.count) == 1 else { return false }
            }
            guard latchkey_EVP_DigestFinal_ex(context, digest, &length) == 1 else { return false }
            var round: UInt32 = 1
            while round < iterations {
                guard latchkey_EVP_DigestInit_ex(context, latchkey_EVP_sha256(), nil) == 1,
                    latchkey_EVP_DigestUpdate(context, digest, 32) == 1,
                    latchkey_EVP_DigestFinal_ex(context, digest, &length) == 1
                else { return false }
                round += 1
            }
            return length == 32
        }
    }
}
