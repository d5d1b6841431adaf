internal import COpenSSL
import FoundationEssentials
import LatchkeyCrypto

// AES-CBC with PKCS #7 padding, and AES-CTR or AES-CBC decryption without padding (OpenSSH's encrypted key files).
extension OpenSSL {
    /// AES-128-CBC with PKCS #7 padding; nil when the key or IV is not 16 bytes, or a decryption's padding
    /// is wrong.
    static func aes128CBC(encrypt: Bool, key: SecureBytes, iv: Data, input: Data) -> Data? {
        defer { latchkey_ERR_clear_error() }
        guard key.count == 16, iv.count == 16, let context = latchkey_EVP_CIPHER_CTX_new() else { return nil }
        defer { latchkey_EVP_CIPHER_CTX_free(context) }
        let initialize = encrypt ? latchkey_EVP_EncryptInit_ex : latchkey_EVP_DecryptInit_ex
        let keyed = key.withUnsafeBytes { raw in
            iv.withUnsafeBytes { vector in
                initialize(
                    context, latchkey_EVP_aes_128_cbc(), nil, raw.bindMemory(to: UInt8.self).baseAddress,
                    vector.bindMemory(to: UInt8.self).baseAddress) == 1
            }
        }
        guard keyed else { return nil }
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        let update = encrypt ? latchkey_EVP_EncryptUpdate : latchkey_EVP_DecryptUpdate
        if !input.isEmpty {
            let ok = input.withUnsafeBytes { raw in
                update(context, &output, &written, raw.bindMemory(to: UInt8.self).baseAddress, Int32(raw.count)) == 1
            }
            guard ok else { return nil }
        }
        var final: Int32 = 0
        let finished = output.withUnsafeMutableBufferPointer { buffer in
            (encrypt ? latchkey_EVP_EncryptFinal_ex : latchkey_EVP_DecryptFinal_ex)(
                context, buffer.baseAddress.map { $0 + Int(written) }, &final) == 1
        }
        defer { output.withUnsafeMutableBytes { wipeBytes($0) } }
        guard finished else { return nil }
        return Data(output.prefix(Int(written + final)))
    }

    /// Decrypts `input` with AES in CTR or CBC mode (no padding: the input is whole blocks for CBC) under a
    /// key of 16, 24 or 32 bytes and a 16-byte IV; nil for other sizes.
    static func aesDecrypt(counterMode: Bool, key: SecureBytes, iv: Data, input: Data) -> SecureBytes? {
        defer { latchkey_ERR_clear_error() }
        let cipher: OpaquePointer?
        switch (key.count, counterMode) {
        case (16, true): cipher = latchkey_EVP_aes_128_ctr()
        case (24, true): cipher = latchkey_EVP_aes_192_ctr()
        case (32, true): cipher = latchkey_EVP_aes_256_ctr()
        case (16, false): cipher = latchkey_EVP_aes_128_cbc()
        case (24, false): cipher = latchkey_EVP_aes_192_cbc()
        case (32, false): cipher = latchkey_EVP_aes_256_cbc()
        default: return nil
        }
        guard iv.count == 16, counterMode || input.count % 16 == 0, let context = latchkey_EVP_CIPHER_CTX_new() else {
            return nil
        }
        defer { latchkey_EVP_CIPHER_CTX_free(context) }
        let keyed = key.withUnsafeBytes { raw in
            iv.withUnsafeBytes { vector in
                latchkey_EVP_DecryptInit_ex(
                    context, cipher, nil, raw.bindMemory(to: UInt8.self).baseAddress,
                    vector.bindMemory(to: UInt8.self).baseAddress) == 1
            }
        }
        guard keyed, latchkey_EVP_CIPHER_CTX_set_padding(context, 0) == 1 else { return nil }
        return secureBytes(count: input.count, lifetime: .transient) { buffer in
            guard !input.isEmpty else { return true }
            var written: Int32 = 0
            var final: Int32 = 0
            let out = buffer.bindMemory(to: UInt8.self).baseAddress
            let updated = input.withUnsafeBytes { raw in
                latchkey_EVP_DecryptUpdate(
                    context, out, &written, raw.bindMemory(to: UInt8.self).baseAddress, Int32(raw.count))
                    == 1
            }
            return updated && latchkey_EVP_DecryptFinal_ex(context, out.map { $0 + Int(written) }, &final) == 1
                && Int(written + final) == input.count
        }
    }
}
