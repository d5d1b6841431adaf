internal import COpenSSL
import FoundationEssentials
import LatchkeyCrypto

// AES-GCM: sealing and opening, into plain or zeroizing buffers.
extension OpenSSL {
    /// AES-GCM with a key of 16, 24 or 32 bytes and an IV of any length; ciphertext and 16-byte tag.
    static func aesGCMSeal(key: SecureBytes, iv: [UInt8], aad: Data?, plaintext: Data) -> (ciphertext: Data, tag: Data)?
    {
        gcm(encrypt: true, key: key, iv: iv, aad: aad, input: plaintext, tag: nil).map { ($0.output, $0.tag) }
    }

    /// Opens what `aesGCMSeal` made; nil when the tag does not authenticate.
    static func aesGCMOpen(key: SecureBytes, iv: [UInt8], aad: Data?, ciphertext: Data, tag: Data) -> Data? {
        gcm(encrypt: false, key: key, iv: iv, aad: aad, input: ciphertext, tag: tag)?.output
    }

    private static func gcm(encrypt: Bool, key: SecureBytes, iv: [UInt8], aad: Data?, input: Data, tag: Data?)
        -> (output: Data, tag: Data)?
    {
        defer { latchkey_ERR_clear_error() }
        let cipher: OpaquePointer?
        switch key.count {
        case 16: cipher = latchkey_EVP_aes_128_gcm()
        case 24: cipher = latchkey_EVP_aes_192_gcm()
        case 32: cipher = latchkey_EVP_aes_256_gcm()
        default: return nil
        }
        guard let context = latchkey_EVP_CIPHER_CTX_new() else { return nil }
        defer { latchkey_EVP_CIPHER_CTX_free(context) }
        let initialize = encrypt ? latchkey_EVP_EncryptInit_ex : latchkey_EVP_DecryptInit_ex
        guard initialize(context, cipher, nil, nil, nil) == 1,
            latchkey_EVP_CIPHER_CTX_ctrl(context, latchkey_gcm_set_iv_length(), Int32(iv.count), nil) == 1
        else { return nil }
        let keyed = key.withUnsafeBytes { raw in
            initialize(context, nil, nil, raw.bindMemory(to: UInt8.self).baseAddress, iv) == 1
        }
        guard keyed else { return nil }
        let update = encrypt ? latchkey_EVP_EncryptUpdate : latchkey_EVP_DecryptUpdate
        var length: Int32 = 0
        if let aad, !aad.isEmpty {
            let ok = aad.withUnsafeBytes { raw in
                update(context, nil, &length, raw.bindMemory(to: UInt8.self).baseAddress, Int32(raw.count)) == 1
            }
            guard ok else { return nil }
        }
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        if !input.isEmpty {
            let ok = input.withUnsafeBytes { raw in
                update(context, &output, &written, raw.bindMemory(to: UInt8.self).baseAddress, Int32(raw.count)) == 1
            }
            guard ok else { return nil }
        }
        if var expected = tag.map(Array.init) {
            guard expected.count == 16,
                latchkey_EVP_CIPHER_CTX_ctrl(context, latchkey_gcm_set_tag(), 16, &expected) == 1
            else {
                return nil
            }
        }
        var final: Int32 = 0
        let finished = output.withUnsafeMutableBufferPointer { buffer in
            (encrypt ? latchkey_EVP_EncryptFinal_ex : latchkey_EVP_DecryptFinal_ex)(
                context, buffer.baseAddress! + Int(written), &final)
                == 1
        }
        guard finished else { return nil }
        var producedTag = [UInt8](repeating: 0, count: 16)
        if encrypt {
            guard latchkey_EVP_CIPHER_CTX_ctrl(context, latchkey_gcm_get_tag(), 16, &producedTag) == 1 else {
                return nil
            }
        }
        return (Data(output.prefix(Int(written + final))), Data(producedTag))
    }

    /// AES-GCM opened into a zeroizing buffer (a key file's private section); nil when the tag does not
    /// authenticate.
    static func aesGCMOpenSecret(key: SecureBytes, iv: [UInt8], ciphertext: Data, tag: Data) -> SecureBytes? {
        guard var plain = aesGCMOpen(key: key, iv: iv, aad: nil, ciphertext: ciphertext, tag: tag) else { return nil }
        defer { plain.resetBytes(in: 0..<plain.count) }
        return plain.withUnsafeBytes { SecureBytes(copying: $0) }
    }
}
