internal import COpenSSL
import FoundationEssentials
import LatchkeyCrypto

// HMAC-SHA-256 (`EVP_MAC`).
extension OpenSSL {
    /// HMAC-SHA-256 of `parts` under `key`.
    static func hmacSHA256(key: UnsafeRawBufferPointer, _ parts: [UnsafeRawBufferPointer]) -> SecureBytes? {
        defer { latchkey_ERR_clear_error() }
        guard let mac = latchkey_EVP_MAC_fetch(nil, "HMAC", nil) else { return nil }
        defer { latchkey_EVP_MAC_free(mac) }
        guard let context = latchkey_EVP_MAC_CTX_new(mac) else { return nil }
        defer { latchkey_EVP_MAC_CTX_free(context) }
        var parameters = [
            latchkey_OSSL_PARAM_construct_utf8_string(
                cString("digest"), UnsafeMutablePointer(mutating: cString("SHA256")), 0),
            latchkey_OSSL_PARAM_construct_end(),
        ]
        guard latchkey_EVP_MAC_init(context, key.bindMemory(to: UInt8.self).baseAddress, key.count, &parameters) == 1
        else {
            return nil
        }
        for part in parts where part.count > 0 {
            guard latchkey_EVP_MAC_update(context, part.bindMemory(to: UInt8.self).baseAddress, part.count) == 1 else {
                return nil
            }
        }
        return secureBytes(count: 32, lifetime: .transient) { buffer in
            var written = 0
            return latchkey_EVP_MAC_final(context, buffer.bindMemory(to: UInt8.self).baseAddress, &written, 32) == 1
                && written == 32
        }
    }
}
