internal import COpenSSL
import FoundationEssentials

/// RSA padding for signatures and encryption.
enum RSAPadding: Sendable, Hashable {
    /// None: the raw RSA operation on a number below the modulus (`RSA_NO_PADDING`).
    case none
    case pkcs1
    case pss(saltLength: Int)
    case oaep(digest: String)
}

// Signatures: EVP signing and verification (hashed by OpenSSL or already), RSA padding, ECDSA's two encodings.
extension OpenSSL {
    /// Signs `message` (hashed with `digest` by OpenSSL), or a ready `digest` value (`hashed`: the input is
    /// already the digest; `digest` nil signs it as it is, as RSA's raw PKCS #1 v1.5 digest signing does).
    static func sign(_ key: PKeyHandle, input: Data, digest: String?, hashed: Bool, padding: RSAPadding?) -> Data? {
        defer { latchkey_ERR_clear_error() }
        var signature = [UInt8](repeating: 0, count: maximumOutput(key))
        var length = signature.count
        let ok = input.withUnsafeBytes { raw -> Bool in
            let bytes = raw.bindMemory(to: UInt8.self).baseAddress
            if hashed {
                guard let context = latchkey_EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { return false }
                defer { latchkey_EVP_PKEY_CTX_free(context) }
                guard latchkey_EVP_PKEY_sign_init(context) == 1,
                    configure(context, digest: digest, padding: padding, signing: true)
                else { return false }
                return latchkey_EVP_PKEY_sign(context, &signature, &length, bytes, raw.count) == 1
            }
            guard let context = latchkey_EVP_MD_CTX_new() else { return false }
            defer { latchkey_EVP_MD_CTX_free(context) }
            var keyContext: OpaquePointer?
            guard
                latchkey_EVP_DigestSignInit(
                    context, &keyContext, digest.flatMap { latchkey_EVP_get_digestbyname($0) }, nil, key.pointer)
                    == 1,
                let keyContext, configure(keyContext, digest: nil, padding: padding, signing: true)
            else { return false }
            return latchkey_EVP_DigestSign(context, &signature, &length, bytes, raw.count) == 1
        }
        return ok ? Data(signature.prefix(length)) : nil
    }

    /// Verifies what `sign` makes.
    static func verify(
        _ key: PKeyHandle, input: Data, signature: Data, digest: String?, hashed: Bool, padding: RSAPadding?
    ) -> Bool {
        defer { latchkey_ERR_clear_error() }
        return input.withUnsafeBytes { raw -> Bool in
            signature.withUnsafeBytes { sig -> Bool in
                let bytes = raw.bindMemory(to: UInt8.self).baseAddress
                let signatureBytes = sig.bindMemory(to: UInt8.self).baseAddress
                if hashed {
                    guard let context = latchkey_EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { return false }
                    defer { latchkey_EVP_PKEY_CTX_free(context) }
                    guard latchkey_EVP_PKEY_verify_init(context) == 1,
                        configure(context, digest: digest, padding: padding, signing: true)
                    else { return false }
                    return latchkey_EVP_PKEY_verify(context, signatureBytes, sig.count, bytes, raw.count) == 1
                }
                guard let context = latchkey_EVP_MD_CTX_new() else { return false }
                defer { latchkey_EVP_MD_CTX_free(context) }
                var keyContext: OpaquePointer?
                guard
                    latchkey_EVP_DigestVerifyInit(
                        context, &keyContext, digest.flatMap { latchkey_EVP_get_digestbyname($0) }, nil, key.pointer)
                        == 1,
                    let keyContext, configure(keyContext, digest: nil, padding: padding, signing: true)
                else { return false }
                return latchkey_EVP_DigestVerify(context, signatureBytes, sig.count, bytes, raw.count) == 1
            }
        }
    }

    static func configure(_ context: OpaquePointer, digest: String?, padding: RSAPadding?, signing: Bool) -> Bool {
        if let digest {
            guard let md = latchkey_EVP_get_digestbyname(digest),
                latchkey_EVP_PKEY_CTX_set_signature_md(context, md) == 1
            else {
                return false
            }
        }
        switch padding {
        case nil: return true
        case .none?: return latchkey_EVP_PKEY_CTX_set_rsa_padding(context, RSA_NO_PADDING) == 1
        case .pkcs1?: return latchkey_EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1
        case .pss(let salt)?:
            return latchkey_EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) == 1
                && latchkey_EVP_PKEY_CTX_set_rsa_pss_saltlen(context, Int32(salt)) == 1
        case .oaep(let name)?:
            guard let md = latchkey_EVP_get_digestbyname(name) else { return false }
            return latchkey_EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_OAEP_PADDING) == 1
                && latchkey_EVP_PKEY_CTX_set_rsa_oaep_md(context, md) == 1
                && latchkey_EVP_PKEY_CTX_set_rsa_mgf1_md(context, md) == 1
        }
    }

    /// An ECDSA signature from DER (X9.62) to r‖s of `size` bytes each (RFC 4754), and back.
    static func ecdsaRaw(fromDER der: Data, size: Int) -> Data? {
        defer { latchkey_ERR_clear_error() }
        return der.withUnsafeBytes { raw -> Data? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let signature = latchkey_d2i_ECDSA_SIG(nil, &cursor, raw.count) else { return nil }
            defer { latchkey_ECDSA_SIG_free(signature) }
            var out = [UInt8](repeating: 0, count: size * 2)
            guard latchkey_BN_bn2binpad(latchkey_ECDSA_SIG_get0_r(signature), &out, Int32(size)) == Int32(size),
                out.withUnsafeMutableBufferPointer({
                    latchkey_BN_bn2binpad(latchkey_ECDSA_SIG_get0_s(signature), $0.baseAddress! + size, Int32(size))
                }) == Int32(size)
            else { return nil }
            return Data(out)
        }
    }

    static func ecdsaDER(fromRaw raw: Data) -> Data? {
        defer { latchkey_ERR_clear_error() }
        guard raw.count % 2 == 0, !raw.isEmpty else { return nil }
        let half = raw.count / 2
        let bytes = [UInt8](raw)
        guard let r = latchkey_BN_bin2bn(bytes, Int32(half), nil) else { return nil }
        guard let s = bytes.withUnsafeBufferPointer({ latchkey_BN_bin2bn($0.baseAddress! + half, Int32(half), nil) })
        else {
            latchkey_BN_free(r)
            return nil
        }
        guard let signature = latchkey_ECDSA_SIG_new() else {
            latchkey_BN_free(r)
            latchkey_BN_free(s)
            return nil
        }
        defer { latchkey_ECDSA_SIG_free(signature) }
        guard latchkey_ECDSA_SIG_set0(signature, r, s) == 1 else {
            latchkey_BN_free(r)
            latchkey_BN_free(s)
            return nil
        }
        return encodeDER { latchkey_i2d_ECDSA_SIG(signature, $0) }
    }
}
