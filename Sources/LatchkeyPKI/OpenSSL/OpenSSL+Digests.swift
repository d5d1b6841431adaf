internal import COpenSSL
import FoundationEssentials

// Digests: SHA-1 and SHA-256 of one buffer, and any digest by name over several.
extension OpenSSL {
    /// `EVP_Digest` with SHA-1 (Apple's public key hash and application label; certificate fingerprints).
    static func sha1(_ data: Data) -> Data { digest(data, latchkey_EVP_sha1(), count: Int(SHA_DIGEST_LENGTH), "SHA-1") }

    /// `EVP_Digest` with SHA-256 (certificate fingerprints).
    static func sha256(_ data: Data) -> Data {
        digest(data, latchkey_EVP_sha256(), count: Int(SHA256_DIGEST_LENGTH), "SHA-256")
    }

    private static func digest(_ data: Data, _ type: OpaquePointer?, count: Int, _ name: String) -> Data {
        var digest = [UInt8](repeating: 0, count: count)
        let ok = data.withUnsafeBytes { raw in
            latchkey_EVP_Digest(raw.baseAddress, raw.count, &digest, nil, type, nil)
        }
        precondition(ok == 1, "\(name) failed in OpenSSL")  // Only on memory exhaustion; nothing can go on.
        return Data(digest)
    }

    /// `EVP_Digest` by name ("SHA1", "SHA224", "SHA256", "SHA384", "SHA512").
    static func digest(_ name: String, _ parts: [UnsafeRawBufferPointer]) -> Data? {
        defer { latchkey_ERR_clear_error() }
        guard let md = latchkey_EVP_get_digestbyname(name), let context = latchkey_EVP_MD_CTX_new() else { return nil }
        defer { latchkey_EVP_MD_CTX_free(context) }
        guard latchkey_EVP_DigestInit_ex(context, md, nil) == 1 else { return nil }
        for part in parts where part.count > 0 {
            guard latchkey_EVP_DigestUpdate(context, part.baseAddress, part.count) == 1 else { return nil }
        }
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard latchkey_EVP_DigestFinal_ex(context, &out, &length) == 1 else { return nil }
        return Data(out.prefix(Int(length)))
    }
}
