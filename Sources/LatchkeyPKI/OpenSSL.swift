internal import COpenSSL
import Foundation
import LatchkeyCrypto

/// What OpenSSL decodes of a certificate for Latchkey.
struct X509Fields: Sendable {
    /// X.509 version: 1, 2 or 3.
    var version: Int
    /// The subject key identifier extension's key identifier, when present.
    var subjectKeyID: Data?
    /// The subjectPublicKey BIT STRING's contents after its unused-bits octet (an EC point, an RSA
    /// PKCS #1 public key).
    var publicKeyBits: Data
    var notValidBefore: Date
    var notValidAfter: Date
    /// The subject alternative names of the IA5String kinds, in order.
    var emailNames: [String]
    var dnsNames: [String]
}

/// Every raw OpenSSL (libcrypto) call of Latchkey lives in this file — certificates, then keys (generation,
/// import and export, signatures, encryption, key agreement, digests, AES-GCM); the rest of the module calls
/// these. Every failure clears OpenSSL's error queue and returns nil or false; callers give Apple's statuses.
enum OpenSSL {
    /// `d2i_X509` and the getters: nil when OpenSSL refuses the bytes as a certificate, when bytes follow
    /// the certificate, or when a field Latchkey needs is missing. OpenSSL's error queue is cleared either
    /// way, so no failure leaks into a later call.
    static func decodeCertificate(_ der: Data) -> X509Fields? {
        defer { ERR_clear_error() }
        return der.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> X509Fields? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let certificate = d2i_X509(nil, &cursor, raw.count) else { return nil }
            defer { X509_free(certificate) }
            guard cursor == base + raw.count else { return nil }
            let version = Int(X509_get_version(certificate)) + 1
            guard (1...3).contains(version),
                let bits = X509_get0_pubkey_bitstr(certificate),
                let notBefore = date(X509_get0_notBefore(certificate)),
                let notAfter = date(X509_get0_notAfter(certificate))
            else { return nil }
            // X509_get0_subject_key_id also caches the extensions; a malformed one marks the certificate
            // invalid, which Latchkey then refuses as Apple's parser does.
            let keyID = X509_get0_subject_key_id(certificate).map(bytes)
            guard X509_get_extension_flags(certificate) & UInt32(EXFLAG_INVALID) == 0 else { return nil }
            var fields = X509Fields(
                version: version, subjectKeyID: keyID, publicKeyBits: bytes(bits), notValidBefore: notBefore,
                notValidAfter: notAfter, emailNames: [], dnsNames: [])
            var critical: Int32 = 0
            if let names = X509_get_ext_d2i(certificate, NID_subject_alt_name, &critical, nil) {
                let list = OpaquePointer(names)
                defer { GENERAL_NAMES_free(list) }
                for index in 0..<latchkey_general_names_count(list) {
                    var text: UnsafePointer<ASN1_STRING>?
                    let type = latchkey_general_name_at(list, index, &text)
                    guard let text, let value = String(bytes: bytes(text), encoding: .ascii) else { continue }
                    if type == GEN_EMAIL { fields.emailNames.append(value) }
                    if type == GEN_DNS { fields.dnsNames.append(value) }
                }
            } else if critical != -1 {
                return nil  // Present but undecodable (0 or 1), or present twice (-2).
            }
            return fields
        }
    }

    /// `EVP_Digest` with SHA-1 (Apple's public key hash and application label; certificate fingerprints).
    static func sha1(_ data: Data) -> Data { digest(data, EVP_sha1(), count: Int(SHA_DIGEST_LENGTH), "SHA-1") }

    /// `EVP_Digest` with SHA-256 (certificate fingerprints).
    static func sha256(_ data: Data) -> Data { digest(data, EVP_sha256(), count: Int(SHA256_DIGEST_LENGTH), "SHA-256") }

    private static func digest(_ data: Data, _ type: OpaquePointer?, count: Int, _ name: String) -> Data {
        var digest = [UInt8](repeating: 0, count: count)
        let ok = data.withUnsafeBytes { raw in
            EVP_Digest(raw.baseAddress, raw.count, &digest, nil, type, nil)
        }
        precondition(ok == 1, "\(name) failed in OpenSSL")  // Only on memory exhaustion; nothing can go on.
        return Data(digest)
    }

    private static func bytes(_ string: UnsafePointer<ASN1_STRING>) -> Data {
        let count = Int(ASN1_STRING_length(string))
        guard count > 0, let start = ASN1_STRING_get0_data(string) else { return Data() }
        return Data(bytes: start, count: count)
    }

    private static func bytes(_ string: UnsafeMutablePointer<ASN1_STRING>) -> Data {
        bytes(UnsafePointer(string))
    }

    /// `ASN1_TIME_to_tm`, then the calendar date as seconds since 1970 (UTC, proleptic Gregorian).
    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        let days = daysFromCivil(
            year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday))
        let seconds = days * 86_400 + Int(parts.tm_hour) * 3_600 + Int(parts.tm_min) * 60 + Int(parts.tm_sec)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Days from 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

final class PKeyHandle: @unchecked Sendable {
    // @unchecked: an EVP_PKEY is never changed after it is made, and OpenSSL 3 lets several threads use one
    // key at once (each operation makes its own context).
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }
}

/// RSA padding for signatures and encryption.
enum RSAPadding: Sendable, Hashable {
    /// None: the raw RSA operation on a number below the modulus (`RSA_NO_PADDING`).
    case none
    case pkcs1
    case pss(saltLength: Int)
    case oaep(digest: String)
}

extension OpenSSL {
    // MARK: Generation and import

    /// `EVP_PKEY_generate` of an EC key on `group` ("P-256", "P-384", "P-521").
    static func generateEC(group: String) -> PKeyHandle? {
        defer { ERR_clear_error() }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_group_name(context, group) == 1,
            EVP_PKEY_generate(context, &key) == 1, let key
        else { return nil }
        return PKeyHandle(key)
    }

    /// `EVP_PKEY_generate` of an RSA key of `bits` (public exponent 65537).
    static func generateRSA(bits: Int) -> PKeyHandle? {
        defer { ERR_clear_error() }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1,
            EVP_PKEY_generate(context, &key) == 1, let key
        else { return nil }
        return PKeyHandle(key)
    }

    /// An EC key from its X9.63 point (and scalar, for a private key) through `EVP_PKEY_fromdata`, checked:
    /// the point must lie on the curve, and a private key's point must be its scalar's. A scalar without a
    /// point makes a key good for key agreement only (the tests' known-answer vectors give no point).
    ///
    /// `checked` false skips the checks, for bytes the keychain itself stored and authenticated.
    static func importEC(group: String, point: Data?, scalar: SecureBytes?, checked: Bool = true) -> PKeyHandle? {
        defer { ERR_clear_error() }
        // The builder keeps pointers to the keys and the group's name (it does not copy them): they must
        // outlive the parameters, so they are static strings.
        let groups: [String: StaticString] = ["P-256": "P-256", "P-384": "P-384", "P-521": "P-521"]
        guard let groupName = groups[group], let builder = OSSL_PARAM_BLD_new() else { return nil }
        defer { OSSL_PARAM_BLD_free(builder) }
        var privateNumber: OpaquePointer?
        defer { if let privateNumber { BN_clear_free(privateNumber) } }
        guard OSSL_PARAM_BLD_push_utf8_string(builder, cString("group"), cString(groupName), 0) == 1 else { return nil }
        if let point {
            let pushed = point.withUnsafeBytes { raw in
                OSSL_PARAM_BLD_push_octet_string(builder, cString("pub"), raw.baseAddress, raw.count) == 1
            }
            guard pushed else { return nil }
        }
        if let scalar {
            privateNumber = scalar.withUnsafeBytes { raw in
                BN_bin2bn(raw.bindMemory(to: UInt8.self).baseAddress, Int32(raw.count), nil)
            }
            guard let privateNumber, OSSL_PARAM_BLD_push_BN(builder, cString("priv"), privateNumber) == 1 else { return nil }
        }
        guard let parameters = OSSL_PARAM_BLD_to_param(builder) else { return nil }
        defer {
            // OpenSSL 3.0 has no OSSL_PARAM_clear_free: the copy of the scalar is wiped here before the free.
            if let scalarParameter = OSSL_PARAM_locate(parameters, "priv"), let data = scalarParameter.pointee.data {
                wipeBytes(UnsafeMutableRawBufferPointer(start: data, count: scalarParameter.pointee.data_size))
            }
            OSSL_PARAM_free(parameters)
        }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        let selection = scalar == nil ? latchkey_selection_public_key() : latchkey_selection_keypair()
        guard EVP_PKEY_fromdata_init(context) == 1, EVP_PKEY_fromdata(context, &key, selection, parameters) == 1,
            let key
        else { return nil }
        let handle = PKeyHandle(key)
        if point == nil || !checked { return handle }
        guard let check = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(check) }
        guard EVP_PKEY_public_check(check) == 1, scalar == nil || EVP_PKEY_pairwise_check(check) == 1 else { return nil }
        return handle
    }

    /// A static string as a C string that lives as long as the program.
    private static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    /// An RSA public key from PKCS #1 RSAPublicKey DER, or from a SubjectPublicKeyInfo.
    static func importRSAPublic(_ der: Data) -> PKeyHandle? {
        defer { ERR_clear_error() }
        return der.withUnsafeBytes { raw -> PKeyHandle? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            if let key = d2i_PublicKey(latchkey_pkey_rsa(), nil, &cursor, raw.count) {
                let handle = PKeyHandle(key)  // Owned (and freed) before any other check.
                if cursor == base + raw.count { return handle }
            }
            cursor = base
            guard let key = d2i_PUBKEY(nil, &cursor, raw.count) else { return nil }
            let handle = PKeyHandle(key)
            guard cursor == base + raw.count, EVP_PKEY_get_base_id(key) == latchkey_pkey_rsa() else { return nil }
            return handle
        }
    }

    /// An RSA private key from PKCS #1 RSAPrivateKey DER, checked for consistency (unless `checked` is
    /// false, for bytes the keychain itself stored and authenticated: the check tests the primes, ~35 ms at
    /// 2048 bits).
    static func importRSAPrivate(_ der: SecureBytes, checked: Bool = true) -> PKeyHandle? {
        defer { ERR_clear_error() }
        return der.withUnsafeBytes { raw -> PKeyHandle? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let key = d2i_PrivateKey(latchkey_pkey_rsa(), nil, &cursor, raw.count) else { return nil }
            let handle = PKeyHandle(key)
            guard cursor == base + raw.count else { return nil }
            if !checked { return handle }
            guard let check = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { return nil }
            defer { EVP_PKEY_CTX_free(check) }
            return EVP_PKEY_check(check) == 1 ? handle : nil
        }
    }

    // MARK: What a key is

    static func isRSA(_ key: PKeyHandle) -> Bool { EVP_PKEY_get_base_id(key.pointer) == latchkey_pkey_rsa() }
    static func isEC(_ key: PKeyHandle) -> Bool { EVP_PKEY_get_base_id(key.pointer) == latchkey_pkey_ec() }
    static func bits(_ key: PKeyHandle) -> Int { Int(EVP_PKEY_get_bits(key.pointer)) }
    /// The largest signature or ciphertext the key makes (`EVP_PKEY_get_size`).
    static func maximumOutput(_ key: PKeyHandle) -> Int { Int(EVP_PKEY_get_size(key.pointer)) }

    /// Whether the key holds its private half.
    static func hasPrivate(_ key: PKeyHandle) -> Bool {
        defer { ERR_clear_error() }
        if isEd25519(key) {
            var length = 0
            return EVP_PKEY_get_raw_private_key(key.pointer, nil, &length) == 1 && length > 0
        }
        if isRSA(key) {
            var number: OpaquePointer?
            defer { if let number { BN_clear_free(number) } }
            return EVP_PKEY_get_bn_param(key.pointer, "d", &number) == 1 && number != nil
        }
        var number: OpaquePointer?
        defer { if let number { BN_clear_free(number) } }
        return EVP_PKEY_get_bn_param(key.pointer, "priv", &number) == 1 && number != nil
    }

    // MARK: Export

    /// An EC key's uncompressed X9.63 point.
    static func ecPoint(_ key: PKeyHandle) -> Data? {
        defer { ERR_clear_error() }
        var buffer: UnsafeMutablePointer<UInt8>?
        let count = EVP_PKEY_get1_encoded_public_key(key.pointer, &buffer)
        guard count > 0, let buffer else { return nil }
        defer { latchkey_openssl_free(buffer) }
        return Data(bytes: buffer, count: count)
    }

    /// An EC private key's scalar, left-padded to `length` bytes.
    static func ecScalar(_ key: PKeyHandle, length: Int) -> SecureBytes? {
        defer { ERR_clear_error() }
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key.pointer, "priv", &number) == 1, let number else { return nil }
        defer { BN_clear_free(number) }
        return secureBytes(count: length) { buffer in
            BN_bn2binpad(number, buffer.bindMemory(to: UInt8.self).baseAddress, Int32(length)) == Int32(length)
        }
    }

    /// An RSA key's PKCS #1 DER: RSAPublicKey, or RSAPrivateKey when `privateKey`.
    static func rsaDER(_ key: PKeyHandle, privateKey: Bool) -> SecureBytes? {
        defer { ERR_clear_error() }
        let count = privateKey ? i2d_PrivateKey(key.pointer, nil) : i2d_PublicKey(key.pointer, nil)
        guard count > 0 else { return nil }
        return secureBytes(count: Int(count)) { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.bindMemory(to: UInt8.self).baseAddress
            return (privateKey ? i2d_PrivateKey(key.pointer, &cursor) : i2d_PublicKey(key.pointer, &cursor)) == count
        }
    }

    /// A zeroizing buffer of `count` bytes that `fill` writes; nil when `fill` reports a failure (the
    /// partly written bytes are wiped by `SecureBytes`).
    private static func secureBytes(
        count: Int, lifetime: SecureBytes.Lifetime = .longLived, _ fill: (UnsafeMutableRawBufferPointer) -> Bool
    ) -> SecureBytes? {
        struct Unfilled: Error {}
        do {
            return try SecureBytes(count: count, lifetime: lifetime) { (buffer) throws(Unfilled) in
                if !fill(buffer) { throw Unfilled() }
            }
        } catch {
            return nil  // `fill` failed; there is nothing more to say than OpenSSL's cleared error queue.
        }
    }

    // MARK: Signatures

    /// Signs `message` (hashed with `digest` by OpenSSL), or a ready `digest` value (`hashed`: the input is
    /// already the digest; `digest` nil signs it as it is, as RSA's raw PKCS #1 v1.5 digest signing does).
    static func sign(_ key: PKeyHandle, input: Data, digest: String?, hashed: Bool, padding: RSAPadding?) -> Data? {
        defer { ERR_clear_error() }
        var signature = [UInt8](repeating: 0, count: maximumOutput(key))
        var length = signature.count
        let ok = input.withUnsafeBytes { raw -> Bool in
            let bytes = raw.bindMemory(to: UInt8.self).baseAddress
            if hashed {
                guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { return false }
                defer { EVP_PKEY_CTX_free(context) }
                guard EVP_PKEY_sign_init(context) == 1, configure(context, digest: digest, padding: padding, signing: true)
                else { return false }
                return EVP_PKEY_sign(context, &signature, &length, bytes, raw.count) == 1
            }
            guard let context = EVP_MD_CTX_new() else { return false }
            defer { EVP_MD_CTX_free(context) }
            var keyContext: OpaquePointer?
            guard EVP_DigestSignInit(context, &keyContext, digest.flatMap { EVP_get_digestbyname($0) }, nil, key.pointer) == 1,
                let keyContext, configure(keyContext, digest: nil, padding: padding, signing: true)
            else { return false }
            return EVP_DigestSign(context, &signature, &length, bytes, raw.count) == 1
        }
        return ok ? Data(signature.prefix(length)) : nil
    }

    /// Verifies what `sign` makes.
    static func verify(_ key: PKeyHandle, input: Data, signature: Data, digest: String?, hashed: Bool, padding: RSAPadding?) -> Bool {
        defer { ERR_clear_error() }
        return input.withUnsafeBytes { raw -> Bool in
            signature.withUnsafeBytes { sig -> Bool in
                let bytes = raw.bindMemory(to: UInt8.self).baseAddress
                let signatureBytes = sig.bindMemory(to: UInt8.self).baseAddress
                if hashed {
                    guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { return false }
                    defer { EVP_PKEY_CTX_free(context) }
                    guard EVP_PKEY_verify_init(context) == 1, configure(context, digest: digest, padding: padding, signing: true)
                    else { return false }
                    return EVP_PKEY_verify(context, signatureBytes, sig.count, bytes, raw.count) == 1
                }
                guard let context = EVP_MD_CTX_new() else { return false }
                defer { EVP_MD_CTX_free(context) }
                var keyContext: OpaquePointer?
                guard EVP_DigestVerifyInit(context, &keyContext, digest.flatMap { EVP_get_digestbyname($0) }, nil, key.pointer) == 1,
                    let keyContext, configure(keyContext, digest: nil, padding: padding, signing: true)
                else { return false }
                return EVP_DigestVerify(context, signatureBytes, sig.count, bytes, raw.count) == 1
            }
        }
    }

    private static func configure(_ context: OpaquePointer, digest: String?, padding: RSAPadding?, signing: Bool) -> Bool {
        if let digest {
            guard let md = EVP_get_digestbyname(digest), EVP_PKEY_CTX_set_signature_md(context, md) == 1 else { return false }
        }
        switch padding {
        case nil: return true
        case .none?: return EVP_PKEY_CTX_set_rsa_padding(context, RSA_NO_PADDING) == 1
        case .pkcs1?: return EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1
        case .pss(let salt)?:
            return EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) == 1
                && EVP_PKEY_CTX_set_rsa_pss_saltlen(context, Int32(salt)) == 1
        case .oaep(let name)?:
            guard let md = EVP_get_digestbyname(name) else { return false }
            return EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_OAEP_PADDING) == 1
                && EVP_PKEY_CTX_set_rsa_oaep_md(context, md) == 1 && EVP_PKEY_CTX_set_rsa_mgf1_md(context, md) == 1
        }
    }

    /// An ECDSA signature from DER (X9.62) to r‖s of `size` bytes each (RFC 4754), and back.
    static func ecdsaRaw(fromDER der: Data, size: Int) -> Data? {
        defer { ERR_clear_error() }
        return der.withUnsafeBytes { raw -> Data? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let signature = d2i_ECDSA_SIG(nil, &cursor, raw.count) else { return nil }
            defer { ECDSA_SIG_free(signature) }
            var out = [UInt8](repeating: 0, count: size * 2)
            guard BN_bn2binpad(ECDSA_SIG_get0_r(signature), &out, Int32(size)) == Int32(size),
                out.withUnsafeMutableBufferPointer({ BN_bn2binpad(ECDSA_SIG_get0_s(signature), $0.baseAddress! + size, Int32(size)) }) == Int32(size)
            else { return nil }
            return Data(out)
        }
    }

    static func ecdsaDER(fromRaw raw: Data) -> Data? {
        defer { ERR_clear_error() }
        guard raw.count % 2 == 0, !raw.isEmpty else { return nil }
        let half = raw.count / 2
        let bytes = [UInt8](raw)
        guard let r = BN_bin2bn(bytes, Int32(half), nil) else { return nil }
        guard let s = bytes.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress! + half, Int32(half), nil) }) else {
            BN_free(r)
            return nil
        }
        guard let signature = ECDSA_SIG_new() else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        defer { ECDSA_SIG_free(signature) }
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        return encodeDER { i2d_ECDSA_SIG(signature, $0) }
    }

    /// Runs an `i2d_…` function twice — for the length, then into a buffer of that length — and checks that
    /// both agree.
    private static func encodeDER(_ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> Data? {
        let count = encode(nil)
        guard count > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: Int(count))
        let written = out.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.baseAddress
            return encode(&cursor)
        }
        return written == count ? Data(out) : nil
    }

    /// Whether `d2i_X509` takes `der` as one whole certificate: the parse alone, the benchmark's floor for
    /// decoding a certificate.
    static func parsesAsCertificate(_ der: Data) -> Bool {
        defer { ERR_clear_error() }
        guard let certificate = loadCertificate(der) else { return false }
        X509_free(certificate)
        return true
    }

    /// `d2i_X509` of a whole DER certificate (the caller frees it with `X509_free`).
    private static func loadCertificate(_ der: Data) -> OpaquePointer? {
        der.withUnsafeBytes { raw -> OpaquePointer? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let certificate = d2i_X509(nil, &cursor, raw.count) else { return nil }
            guard cursor == base + raw.count else {
                X509_free(certificate)
                return nil
            }
            return certificate
        }
    }

    // MARK: Encryption and key agreement

    /// RSA encryption with PKCS #1 v1.5 or OAEP padding, or none (the input then a whole block below the
    /// modulus).
    static func rsaEncrypt(_ key: PKeyHandle, _ plaintext: Data, padding: RSAPadding) -> Data? {
        defer { ERR_clear_error() }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_encrypt_init(context) == 1, configure(context, digest: nil, padding: padding, signing: false) else { return nil }
        var out = [UInt8](repeating: 0, count: maximumOutput(key))
        var length = out.count
        let ok = plaintext.withUnsafeBytes { raw in
            EVP_PKEY_encrypt(context, &out, &length, raw.bindMemory(to: UInt8.self).baseAddress, raw.count) == 1
        }
        return ok ? Data(out.prefix(length)) : nil
    }

    /// RSA decryption; nil when the padding does not check.
    static func rsaDecrypt(_ key: PKeyHandle, _ ciphertext: Data, padding: RSAPadding) -> SecureBytes? {
        defer { ERR_clear_error() }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_decrypt_init(context) == 1, configure(context, digest: nil, padding: padding, signing: false) else { return nil }
        let scratch = SecureBytes(count: maximumOutput(key), lifetime: .transient) { _ in }
        var length = scratch.count
        let ok = scratch.withUnsafeBytes { out in
            ciphertext.withUnsafeBytes { raw in
                EVP_PKEY_decrypt(context, UnsafeMutablePointer(mutating: out.bindMemory(to: UInt8.self).baseAddress), &length,
                                 raw.bindMemory(to: UInt8.self).baseAddress, raw.count) == 1
            }
        }
        guard ok else { return nil }
        return scratch.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0.prefix(length))) }
    }

    /// ECDH (`EVP_PKEY_derive`): the shared X coordinate of `key` (private) and `peer` (public).
    static func derive(_ key: PKeyHandle, peer: PKeyHandle) -> SecureBytes? {
        defer { ERR_clear_error() }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key.pointer, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var length = 0
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, peer.pointer) == 1,
            EVP_PKEY_derive(context, nil, &length) == 1, length > 0
        else { return nil }
        return secureBytes(count: length, lifetime: .transient) { buffer in
            var written = length
            return EVP_PKEY_derive(context, buffer.bindMemory(to: UInt8.self).baseAddress, &written) == 1 && written == length
        }
    }

    // MARK: Digests and AES-GCM

    /// `EVP_Digest` by name ("SHA1", "SHA224", "SHA256", "SHA384", "SHA512").
    static func digest(_ name: String, _ parts: [UnsafeRawBufferPointer]) -> Data? {
        defer { ERR_clear_error() }
        guard let md = EVP_get_digestbyname(name), let context = EVP_MD_CTX_new() else { return nil }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestInit_ex(context, md, nil) == 1 else { return nil }
        for part in parts where part.count > 0 {
            guard EVP_DigestUpdate(context, part.baseAddress, part.count) == 1 else { return nil }
        }
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_DigestFinal_ex(context, &out, &length) == 1 else { return nil }
        return Data(out.prefix(Int(length)))
    }

    /// AES-GCM with a key of 16, 24 or 32 bytes and an IV of any length; ciphertext and 16-byte tag.
    static func aesGCMSeal(key: SecureBytes, iv: [UInt8], aad: Data?, plaintext: Data) -> (ciphertext: Data, tag: Data)? {
        gcm(encrypt: true, key: key, iv: iv, aad: aad, input: plaintext, tag: nil).map { ($0.output, $0.tag) }
    }

    /// Opens what `aesGCMSeal` made; nil when the tag does not authenticate.
    static func aesGCMOpen(key: SecureBytes, iv: [UInt8], aad: Data?, ciphertext: Data, tag: Data) -> Data? {
        gcm(encrypt: false, key: key, iv: iv, aad: aad, input: ciphertext, tag: tag)?.output
    }

    private static func gcm(encrypt: Bool, key: SecureBytes, iv: [UInt8], aad: Data?, input: Data, tag: Data?)
        -> (output: Data, tag: Data)?
    {
        defer { ERR_clear_error() }
        let cipher: OpaquePointer?
        switch key.count {
        case 16: cipher = EVP_aes_128_gcm()
        case 24: cipher = EVP_aes_192_gcm()
        case 32: cipher = EVP_aes_256_gcm()
        default: return nil
        }
        guard let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        let initialize = encrypt ? EVP_EncryptInit_ex : EVP_DecryptInit_ex
        guard initialize(context, cipher, nil, nil, nil) == 1,
            EVP_CIPHER_CTX_ctrl(context, latchkey_gcm_set_iv_length(), Int32(iv.count), nil) == 1
        else { return nil }
        let keyed = key.withUnsafeBytes { raw in initialize(context, nil, nil, raw.bindMemory(to: UInt8.self).baseAddress, iv) == 1 }
        guard keyed else { return nil }
        let update = encrypt ? EVP_EncryptUpdate : EVP_DecryptUpdate
        var length: Int32 = 0
        if let aad, !aad.isEmpty {
            let ok = aad.withUnsafeBytes { raw in update(context, nil, &length, raw.bindMemory(to: UInt8.self).baseAddress, Int32(raw.count)) == 1 }
            guard ok else { return nil }
        }
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        if !input.isEmpty {
            let ok = input.withUnsafeBytes { raw in update(context, &output, &written, raw.bindMemory(to: UInt8.self).baseAddress, Int32(raw.count)) == 1 }
            guard ok else { return nil }
        }
        if var expected = tag.map(Array.init) {
            guard expected.count == 16, EVP_CIPHER_CTX_ctrl(context, latchkey_gcm_set_tag(), 16, &expected) == 1 else { return nil }
        }
        var final: Int32 = 0
        let finished = output.withUnsafeMutableBufferPointer { buffer in
            (encrypt ? EVP_EncryptFinal_ex : EVP_DecryptFinal_ex)(context, buffer.baseAddress! + Int(written), &final) == 1
        }
        guard finished else { return nil }
        var producedTag = [UInt8](repeating: 0, count: 16)
        if encrypt {
            guard EVP_CIPHER_CTX_ctrl(context, latchkey_gcm_get_tag(), 16, &producedTag) == 1 else { return nil }
        }
        return (Data(output.prefix(Int(written + final))), Data(producedTag))
    }

    // MARK: Finite-field Diffie-Hellman, HMAC and AES-CBC (the Secret Service's transport)

    /// `base` ^ `exponent` mod `modulus` (all big-endian), in constant time for the secret exponent, padded
    /// on the left to the modulus's length; nil when `base` is not in 2…modulus − 2 (a peer's public value
    /// of 0, 1 or p − 1 would give away the result).
    static func modularExponent(base: Data, exponent: SecureBytes, modulus: Data) -> SecureBytes? {
        defer { ERR_clear_error() }
        guard let context = BN_CTX_new() else { return nil }
        defer { BN_CTX_free(context) }
        func number(_ bytes: Data) -> OpaquePointer? {
            bytes.withUnsafeBytes { BN_bin2bn($0.bindMemory(to: UInt8.self).baseAddress, Int32($0.count), nil) }
        }
        guard let p = number(modulus), let g = number(base) else { return nil }
        defer {
            BN_free(p)
            BN_free(g)
        }
        let x = exponent.withUnsafeBytes { BN_bin2bn($0.bindMemory(to: UInt8.self).baseAddress, Int32($0.count), nil) }
        guard let x, let result = BN_new(), let limit = BN_dup(p) else { return nil }
        defer {
            BN_clear_free(x)
            BN_clear_free(result)
            BN_free(limit)
        }
        BN_set_flags(x, BN_FLG_CONSTTIME)
        guard BN_sub_word(limit, 1) == 1, BN_cmp(g, BN_value_one()) > 0, BN_cmp(g, limit) < 0,
            BN_mod_exp_mont_consttime(result, g, x, p, context, nil) == 1
        else { return nil }
        return secureBytes(count: modulus.count, lifetime: .transient) { buffer in
            BN_bn2binpad(result, buffer.bindMemory(to: UInt8.self).baseAddress, Int32(buffer.count)) == Int32(buffer.count)
        }
    }

    /// HMAC-SHA-256 of `parts` under `key`.
    static func hmacSHA256(key: UnsafeRawBufferPointer, _ parts: [UnsafeRawBufferPointer]) -> SecureBytes? {
        defer { ERR_clear_error() }
        guard let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { return nil }
        defer { EVP_MAC_free(mac) }
        guard let context = EVP_MAC_CTX_new(mac) else { return nil }
        defer { EVP_MAC_CTX_free(context) }
        var parameters = [
            OSSL_PARAM_construct_utf8_string(cString("digest"), UnsafeMutablePointer(mutating: cString("SHA256")), 0),
            OSSL_PARAM_construct_end(),
        ]
        guard EVP_MAC_init(context, key.bindMemory(to: UInt8.self).baseAddress, key.count, &parameters) == 1 else { return nil }
        for part in parts where part.count > 0 {
            guard EVP_MAC_update(context, part.bindMemory(to: UInt8.self).baseAddress, part.count) == 1 else { return nil }
        }
        return secureBytes(count: 32, lifetime: .transient) { buffer in
            var written = 0
            return EVP_MAC_final(context, buffer.bindMemory(to: UInt8.self).baseAddress, &written, 32) == 1 && written == 32
        }
    }

    /// AES-128-CBC with PKCS #7 padding; nil when the key or IV is not 16 bytes, or a decryption's padding
    /// is wrong.
    static func aes128CBC(encrypt: Bool, key: SecureBytes, iv: Data, input: Data) -> Data? {
        defer { ERR_clear_error() }
        guard key.count == 16, iv.count == 16, let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        let initialize = encrypt ? EVP_EncryptInit_ex : EVP_DecryptInit_ex
        let keyed = key.withUnsafeBytes { raw in
            iv.withUnsafeBytes { vector in
                initialize(context, EVP_aes_128_cbc(), nil, raw.bindMemory(to: UInt8.self).baseAddress,
                           vector.bindMemory(to: UInt8.self).baseAddress) == 1
            }
        }
        guard keyed else { return nil }
        var output = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        let update = encrypt ? EVP_EncryptUpdate : EVP_DecryptUpdate
        if !input.isEmpty {
            let ok = input.withUnsafeBytes { raw in
                update(context, &output, &written, raw.bindMemory(to: UInt8.self).baseAddress, Int32(raw.count)) == 1
            }
            guard ok else { return nil }
        }
        var final: Int32 = 0
        let finished = output.withUnsafeMutableBufferPointer { buffer in
            (encrypt ? EVP_EncryptFinal_ex : EVP_DecryptFinal_ex)(context, buffer.baseAddress.map { $0 + Int(written) }, &final) == 1
        }
        defer { output.withUnsafeMutableBytes { wipeBytes($0) } }
        guard finished else { return nil }
        return Data(output.prefix(Int(written + final)))
    }

    // MARK: PKCS #12

    /// What a PKCS #12 file holds.
    struct PKCS12Contents {
        var key: PKeyHandle?
        var certificate: Data?
        var chain: [Data] = []
        var friendlyName: String?
        var localKeyID: Data?
    }

    enum PKCS12Failure: Error {
        case malformed, wrongPassphrase
        /// A key derivation that would cost more than `PasswordCost` allows, and what it asked for.
        case tooCostly(String)
    }

    /// The most a password-based key derivation in a file Latchkey opens may cost, checked from its
    /// parameters before anything is derived: a PKCS #12 file or an encrypted private key can ask for 2³¹−1
    /// iterations (minutes of CPU for one small file), and a server that imports its users' files must not pay
    /// that. The bounds are well above what tools write (OpenSSL 2,048 iterations, Windows 2,000, OWASP's
    /// PBKDF2-SHA-256 advice 600,000; scrypt N=2¹⁴, r=8, p=1).
    enum PasswordCost {
        /// Iterations of PBKDF2, PKCS #5 v1.5 or PKCS #12's derivation (and of a PKCS #12 MAC).
        static let maximumIterations: UInt64 = 1_000_000
        /// scrypt's N·r·p.
        static let maximumScrypt: UInt64 = 1 << 24

        /// Why deriving a key with `algorithm` for `what` costs too much, or nil when it does not.
        static func excess(_ algorithm: UnsafePointer<X509_ALGOR>?, _ what: String) -> String? {
            var isScrypt: Int32 = 0
            let cost = latchkey_password_cost(algorithm, &isScrypt)
            // Parameters OpenSSL's own types cannot read: nothing is derived from them, and decrypting says so.
            if cost == UInt64.max { return nil }
            if isScrypt != 0 {
                return cost > maximumScrypt ? "\(what) asks for an scrypt cost (N·r·p) of \(cost); at most \(maximumScrypt) is accepted" : nil
            }
            return iterations(cost, what)
        }

        /// Why `count` iterations for `what` are too many, or nil.
        static func iterations(_ count: UInt64, _ what: String) -> String? {
            count > maximumIterations
                ? "\(what) asks for \(count) iterations of its key derivation; at most \(maximumIterations) are accepted" : nil
        }
    }

    /// Why decrypting a PKCS #12 file (whose MAC was checked) would cost too much — each encrypted safe's and
    /// each encrypted key's derivation, checked before it is used — or nil.
    private static func excessiveCost(_ file: OpaquePointer, password: String?) -> String? {
        guard let safes = PKCS12_unpack_authsafes(file) else { return nil }  // PKCS12_parse says what is wrong.
        defer { latchkey_pkcs7_free_all(safes) }
        for index in 0..<latchkey_pkcs7_count(safes) {
            guard let safe = latchkey_pkcs7_at(safes, index) else { continue }
            let bags: OpaquePointer?
            switch latchkey_pkcs7_nid(safe) {
            case NID_pkcs7_data: bags = PKCS12_unpack_p7data(safe)
            case NID_pkcs7_encrypted:
                if let excess = PasswordCost.excess(latchkey_pkcs7_encryption(safe), "an encrypted part of the PKCS #12 file") { return excess }
                bags = PKCS12_unpack_p7encdata(safe, password, password.map { Int32($0.utf8.count) } ?? 0)
            default: continue
            }
            guard let bags else { continue }
            defer { latchkey_safebags_free(bags) }
            if let excess = excessiveCost(bags: bags) { return excess }
        }
        return nil
    }

    /// Why decrypting one of `bags`' shrouded keys (or one in a bag of bags) would cost too much, or nil.
    private static func excessiveCost(bags: OpaquePointer) -> String? {
        for index in 0..<latchkey_safebag_count(bags) {
            guard let bag = latchkey_safebag_at(bags, index) else { continue }
            switch PKCS12_SAFEBAG_get_nid(bag) {
            case NID_pkcs8ShroudedKeyBag:
                var algorithm: UnsafePointer<X509_ALGOR>?
                X509_SIG_get0(PKCS12_SAFEBAG_get0_pkcs8(bag), &algorithm, nil)
                if let excess = PasswordCost.excess(algorithm, "the PKCS #12 file's private key") { return excess }
            case NID_safeContentsBag:
                if let inner = PKCS12_SAFEBAG_get0_safes(bag), let excess = excessiveCost(bags: inner) { return excess }
            default: continue
            }
        }
        return nil
    }

    /// Why decrypting the PEM "ENCRYPTED PRIVATE KEY" block `pem` would cost too much, or nil (also when it is
    /// not one: reading it says what is wrong).
    static func encryptedKeyCostExcess(_ pem: Data) -> String? {
        defer { ERR_clear_error() }
        return pem.withUnsafeBytes { raw -> String? in
            guard let base = raw.baseAddress, raw.count > 0, raw.count < Int(Int32.max), let bio = BIO_new_mem_buf(base, Int32(raw.count))
            else { return nil }
            defer { BIO_free(bio) }
            guard let signature = PEM_read_bio_PKCS8(bio, nil, nil, nil) else { return nil }
            defer { X509_SIG_free(signature) }
            var algorithm: UnsafePointer<X509_ALGOR>?
            X509_SIG_get0(signature, &algorithm, nil)
            return PasswordCost.excess(algorithm, "the encrypted private key")
        }
    }

    /// Loads OpenSSL's "legacy" provider (beside "default") once, so files made by older tools — RC2-40 and
    /// Triple DES — decrypt. It only makes those algorithms available; Latchkey chooses its own explicitly.
    private static let legacyProviders: LoadedProviders = {
        defer { ERR_clear_error() }
        return LoadedProviders(legacy: OSSL_PROVIDER_load(nil, "legacy"), standard: OSSL_PROVIDER_load(nil, "default"))
    }()

    /// The providers' handles, kept for the process's life (never unloaded).
    private struct LoadedProviders: @unchecked Sendable {
        // @unchecked: two handles OpenSSL owns and never changes once loaded; they are only kept, never used.
        let legacy: OpaquePointer?
        let standard: OpaquePointer?
    }

    /// `d2i_PKCS12`, `PKCS12_verify_mac`, `PKCS12_parse`: the key, the certificate, the other certificates,
    /// and the certificate's friendly name and local key ID.
    static func parsePKCS12(_ der: Data, passphrase: String) -> Result<PKCS12Contents, PKCS12Failure> {
        defer { ERR_clear_error() }
        _ = legacyProviders  // Without them only modern files open; their import still works.
        return der.withUnsafeBytes { raw -> Result<PKCS12Contents, PKCS12Failure> in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else { return .failure(.malformed) }
            var cursor: UnsafePointer<UInt8>? = base
            guard let file = d2i_PKCS12(nil, &cursor, raw.count) else { return .failure(.malformed) }
            defer { PKCS12_free(file) }  // Before any other check: a file followed by junk is freed too.
            guard cursor == base + raw.count else { return .failure(.malformed) }
            // The MAC's cost before the MAC is computed (the rest once the passphrase is known to be right).
            var macIterations: UnsafePointer<ASN1_INTEGER>?
            PKCS12_get0_mac(nil, nil, nil, &macIterations, file)
            if let macIterations {
                var count: UInt64 = 0
                guard ASN1_INTEGER_get_uint64(&count, macIterations) == 1 else { return .failure(.malformed) }
                if let excess = PasswordCost.iterations(count, "the PKCS #12 file's MAC") { return .failure(.tooCostly(excess)) }
            }
            // A file without a MAC is not checked; an empty passphrase may have been given to the MAC as none.
            let password: String?
            if PKCS12_mac_present(file) != 1 || PKCS12_verify_mac(file, passphrase, Int32(passphrase.utf8.count)) == 1 {
                password = passphrase
            } else if passphrase.isEmpty && PKCS12_verify_mac(file, nil, 0) == 1 {
                password = nil
            } else {
                return .failure(.wrongPassphrase)
            }
            if let excess = excessiveCost(file, password: password) { return .failure(.tooCostly(excess)) }
            var key: OpaquePointer?
            var certificate: OpaquePointer?
            var others: OpaquePointer?
            guard PKCS12_parse(file, password, &key, &certificate, &others) == 1 else { return .failure(.malformed) }
            defer {
                if let certificate { X509_free(certificate) }
                if let others { latchkey_certificates_free(others) }
            }
            var contents = PKCS12Contents()
            if let key { contents.key = PKeyHandle(key) }
            if let certificate {
                contents.certificate = encode(certificate)
                var length: Int32 = 0
                if let alias = X509_alias_get0(certificate, &length), length > 0 {
                    contents.friendlyName = String(decoding: UnsafeBufferPointer(start: alias, count: Int(length)), as: UTF8.self)
                }
                if let keyID = X509_keyid_get0(certificate, &length), length > 0 {
                    contents.localKeyID = Data(bytes: keyID, count: Int(length))
                }
            }
            if let others {
                for index in 0..<latchkey_certificates_count(others) {
                    if let other = latchkey_certificate_at(others, index), let der = encode(other) { contents.chain.append(der) }
                }
            }
            return .success(contents)
        }
    }

    /// `i2d_X509`.
    private static func encode(_ certificate: OpaquePointer) -> Data? { encodeDER { i2d_X509(certificate, $0) } }

    // MARK: Trust

    /// What `X509_verify_cert` decided: the chain it built (leaf first, DER) and, when it failed, OpenSSL's
    /// error number and message.
    struct Verification {
        var chain: [Data]
        var error: (code: Int32, message: String)?
    }

    /// The settings of one verification.
    struct VerificationRequest {
        var leaf: Data
        var intermediates: [Data]
        /// Anchors to trust beside (or, with `anchorsOnly`, instead of) the system's store.
        var anchors: [Data]
        var anchorsOnly: Bool
        var date: Date?
        /// `X509_PURPOSE_SSL_SERVER` or `_CLIENT`, or none.
        var sslServer: Bool?
        var hostname: String?
    }

    /// `X509_verify_cert` with the system's CA store (`X509_STORE_set_default_paths`, Debian's
    /// /etc/ssl/certs) unless only anchors count; anchors may be intermediate certificates (partial chains
    /// are allowed, as Apple trusts any anchor). Nil when a certificate does not load.
    static func verify(_ request: VerificationRequest) -> Verification? {
        defer { ERR_clear_error() }
        guard let store = X509_STORE_new() else { return nil }
        defer { X509_STORE_free(store) }
        if !request.anchorsOnly { _ = X509_STORE_set_default_paths(store) }  // A missing store leaves only the anchors.
        for anchor in request.anchors {
            guard let certificate = loadCertificate(anchor) else { return nil }
            defer { X509_free(certificate) }
            _ = X509_STORE_add_cert(store, certificate)  // Fails only for a duplicate, which changes nothing.
        }
        guard let leaf = loadCertificate(request.leaf) else { return nil }
        defer { X509_free(leaf) }
        guard let untrusted = latchkey_certificates_new() else { return nil }
        defer { latchkey_certificates_free(untrusted) }
        for intermediate in request.intermediates {
            guard let certificate = loadCertificate(intermediate) else { return nil }
            guard latchkey_certificates_push(untrusted, certificate) > 0 else {
                X509_free(certificate)
                return nil
            }
        }
        guard let context = X509_STORE_CTX_new() else { return nil }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf, untrusted) == 1, let parameters = X509_STORE_CTX_get0_param(context) else { return nil }
        if !request.anchors.isEmpty { _ = X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN)) }
        if let date = request.date { X509_VERIFY_PARAM_set_time(parameters, time_t(date.timeIntervalSince1970.rounded(.down))) }
        if let server = request.sslServer {
            guard X509_STORE_CTX_set_purpose(context, server ? X509_PURPOSE_SSL_SERVER : X509_PURPOSE_SSL_CLIENT) == 1 else { return nil }
        }
        if let host = request.hostname, !host.isEmpty {
            let isAddress = X509_VERIFY_PARAM_set1_ip_asc(parameters, host) == 1
            if !isAddress {
                ERR_clear_error()
                guard X509_VERIFY_PARAM_set1_host(parameters, host, host.utf8.count) == 1 else { return nil }
            }
        }
        let verified = X509_verify_cert(context) == 1
        var chain: [Data] = []
        if let built = X509_STORE_CTX_get1_chain(context) {
            defer { latchkey_certificates_free(built) }
            for index in 0..<latchkey_certificates_count(built) {
                if let certificate = latchkey_certificate_at(built, index), let der = encode(certificate) { chain.append(der) }
            }
        }
        if verified { return Verification(chain: chain, error: nil) }
        let code = X509_STORE_CTX_get_error(context)
        let message = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
        return Verification(chain: chain, error: (code, message))
    }

    /// Apple's status for an `X509_verify_cert` error (`errSecNotTrusted` for every failure to reach an anchor).
    static func appleStatus(forVerifyError code: Int32) -> Int32 {
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED: -67818
        case X509_V_ERR_CERT_NOT_YET_VALID: -67819
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH: -67602
        case X509_V_ERR_INVALID_CA: -67605
        case X509_V_ERR_PATH_LENGTH_EXCEEDED: -67611
        case X509_V_ERR_INVALID_PURPOSE: -67609
        case X509_V_ERR_CERT_REVOKED: -67820
        default: -67843
        }
    }

    /// `PKCS12_create` with OpenSSL's default algorithms, then `i2d_PKCS12`.
    static func makePKCS12(key: PKeyHandle, certificate: Data, chain: [Data], passphrase: String, name: String?) -> Data? {
        defer { ERR_clear_error() }
        guard let leaf = loadCertificate(certificate) else { return nil }
        defer { X509_free(leaf) }
        guard let others = latchkey_certificates_new() else { return nil }
        defer { latchkey_certificates_free(others) }
        for der in chain {
            guard let other = loadCertificate(der) else { return nil }
            guard latchkey_certificates_push(others, other) > 0 else {
                X509_free(other)
                return nil
            }
        }
        guard let file = PKCS12_create(passphrase, name, key.pointer, leaf, others, 0, 0, 0, 0, 0) else { return nil }
        defer { PKCS12_free(file) }
        return encodeDER { i2d_PKCS12(file, $0) }
    }

    // MARK: PEM keys

    /// The bytes a memory BIO holds, in a zeroizing buffer (they may be a private key).
    private static func contents(of bio: OpaquePointer) -> SecureBytes? {
        var data: UnsafeMutablePointer<CChar>?
        let count = latchkey_bio_contents(bio, &data)
        guard count > 0, let data else { return nil }
        return SecureBytes(copying: UnsafeRawBufferPointer(start: data, count: count))
    }

    /// `PEM_write_bio_PUBKEY`: "-----BEGIN PUBLIC KEY-----" (SubjectPublicKeyInfo).
    static func publicKeyPEM(_ key: PKeyHandle) -> SecureBytes? {
        defer { ERR_clear_error() }
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PUBKEY(bio, key.pointer) == 1 else { return nil }
        return contents(of: bio)
    }

    /// `PEM_write_bio_PKCS8PrivateKey` with AES-256-CBC: "-----BEGIN ENCRYPTED PRIVATE KEY-----".
    static func encryptedPrivateKeyPEM(_ key: PKeyHandle, passphrase: String) -> SecureBytes? {
        defer { ERR_clear_error() }
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        let written = passphrase.withCString { pass in
            PEM_write_bio_PKCS8PrivateKey(bio, key.pointer, EVP_aes_256_cbc(), nil, 0, Self.passphraseCallback, UnsafeMutableRawPointer(mutating: pass))
        }
        guard written == 1 else { return nil }
        return contents(of: bio)
    }

    /// The `pem_password_cb` Latchkey gives OpenSSL: copies the caller's passphrase (`context`, a C string)
    /// and never asks anyone; an empty passphrase or one too long for the buffer is no passphrase.
    private static let passphraseCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?) -> Int32 = {
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
        defer { ERR_clear_error() }
        return pem.withUnsafeBytes { raw -> (PKeyHandle, Bool)? in
            guard let base = raw.baseAddress, raw.count > 0, raw.count < Int(Int32.max) else { return nil }
            guard let bio = BIO_new_mem_buf(base, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            // Never OpenSSL's default callback, which would ask on the terminal: the passphrase comes from the
            // caller or there is none.
            return passphrase.withCString { pass -> (PKeyHandle, Bool)? in
                let given = UnsafeMutableRawPointer(mutating: pass)
                if let key = PEM_read_bio_PUBKEY(bio, nil, Self.passphraseCallback, given) { return (PKeyHandle(key), false) }
                _ = BIO_ctrl(bio, BIO_CTRL_RESET, 0, nil)  // BIO_reset: back to the start of the buffer.
                return PEM_read_bio_PrivateKey(bio, nil, Self.passphraseCallback, given).map { (PKeyHandle($0), true) }
            }
        }
    }
}

extension OpenSSL {
    // MARK: RSA's CRT exponents (an SSH agent is given n, e, d, p, q and iqmp, PKCS #1 needs dP and dQ too)

    /// d mod (p − 1) and d mod (q − 1), each as long as its prime; nil when a prime is 0 or 1.
    static func rsaCRTExponents(privateExponent: SecureBytes, prime1: SecureBytes, prime2: SecureBytes) -> (SecureBytes, SecureBytes)? {
        defer { ERR_clear_error() }
        guard let context = BN_CTX_new() else { return nil }
        defer { BN_CTX_free(context) }
        func number(_ bytes: SecureBytes) -> OpaquePointer? {
            bytes.withUnsafeBytes { BN_bin2bn($0.bindMemory(to: UInt8.self).baseAddress, Int32($0.count), nil) }
        }
        guard let d = number(privateExponent) else { return nil }
        defer { BN_clear_free(d) }
        BN_set_flags(d, BN_FLG_CONSTTIME)
        func exponent(for prime: SecureBytes) -> SecureBytes? {
            guard let p = number(prime) else { return nil }
            defer { BN_clear_free(p) }
            guard let result = BN_new() else { return nil }
            defer { BN_clear_free(result) }
            guard BN_num_bits(p) >= 2, BN_sub_word(p, 1) == 1, BN_div(nil, result, d, p, context) == 1 else { return nil }
            return secureBytes(count: prime.count, lifetime: .transient) { buffer in
                BN_bn2binpad(result, buffer.bindMemory(to: UInt8.self).baseAddress, Int32(buffer.count)) == Int32(buffer.count)
            }
        }
        guard let first = exponent(for: prime1), let second = exponent(for: prime2) else { return nil }
        return (first, second)
    }
}

extension OpenSSL {
    // MARK: Ed25519 (EVP's raw keys)

    /// An Ed25519 public key from its 32 bytes.
    static func importEd25519Public(_ bytes: Data) -> PKeyHandle? {
        defer { ERR_clear_error() }
        guard bytes.count == 32 else { return nil }
        return bytes.withUnsafeBytes { raw in
            EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, raw.bindMemory(to: UInt8.self).baseAddress, 32).map(PKeyHandle.init)
        }
    }

    /// `EVP_PKEY_ED25519`.
    static func isEd25519(_ key: PKeyHandle) -> Bool { EVP_PKEY_get_base_id(key.pointer) == EVP_PKEY_ED25519 }

    /// A new random Ed25519 key.
    static func generateEd25519() -> PKeyHandle? {
        defer { ERR_clear_error() }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "ED25519", nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_generate(context, &key) == 1, let key else { return nil }
        return PKeyHandle(key)
    }

    /// An Ed25519 private key from its 32-byte seed (RFC 8032's private key).
    static func importEd25519Private(_ seed: SecureBytes) -> PKeyHandle? {
        defer { ERR_clear_error() }
        guard seed.count == 32 else { return nil }
        return seed.withUnsafeBytes { raw in
            EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, raw.bindMemory(to: UInt8.self).baseAddress, 32).map(PKeyHandle.init)
        }
    }

    /// An Ed25519 key's 32-byte public key.
    static func ed25519PublicBytes(_ key: PKeyHandle) -> Data? {
        defer { ERR_clear_error() }
        var bytes = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard EVP_PKEY_get_raw_public_key(key.pointer, &bytes, &length) == 1, length == 32 else { return nil }
        return Data(bytes)
    }

    /// An Ed25519 private key's 32-byte seed; nil for a public key.
    static func ed25519Seed(_ key: PKeyHandle) -> SecureBytes? {
        defer { ERR_clear_error() }
        var length = 0
        guard EVP_PKEY_get_raw_private_key(key.pointer, nil, &length) == 1, length == 32 else { return nil }
        return secureBytes(count: 32) { buffer in
            var written = 32
            return EVP_PKEY_get_raw_private_key(key.pointer, buffer.bindMemory(to: UInt8.self).baseAddress, &written) == 1 && written == 32
        }
    }
}

extension OpenSSL {
    // MARK: AES-CTR and AES-CBC without padding (OpenSSH's encrypted key files)

    /// Decrypts `input` with AES in CTR or CBC mode (no padding: the input is whole blocks for CBC) under a
    /// key of 16, 24 or 32 bytes and a 16-byte IV; nil for other sizes.
    static func aesDecrypt(counterMode: Bool, key: SecureBytes, iv: Data, input: Data) -> SecureBytes? {
        defer { ERR_clear_error() }
        let cipher: OpaquePointer?
        switch (key.count, counterMode) {
        case (16, true): cipher = EVP_aes_128_ctr()
        case (24, true): cipher = EVP_aes_192_ctr()
        case (32, true): cipher = EVP_aes_256_ctr()
        case (16, false): cipher = EVP_aes_128_cbc()
        case (24, false): cipher = EVP_aes_192_cbc()
        case (32, false): cipher = EVP_aes_256_cbc()
        default: return nil
        }
        guard iv.count == 16, counterMode || input.count % 16 == 0, let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        let keyed = key.withUnsafeBytes { raw in
            iv.withUnsafeBytes { vector in
                EVP_DecryptInit_ex(context, cipher, nil, raw.bindMemory(to: UInt8.self).baseAddress, vector.bindMemory(to: UInt8.self).baseAddress) == 1
            }
        }
        guard keyed, EVP_CIPHER_CTX_set_padding(context, 0) == 1 else { return nil }
        return secureBytes(count: input.count, lifetime: .transient) { buffer in
            guard !input.isEmpty else { return true }
            var written: Int32 = 0, final: Int32 = 0
            let out = buffer.bindMemory(to: UInt8.self).baseAddress
            let updated = input.withUnsafeBytes { raw in
                EVP_DecryptUpdate(context, out, &written, raw.bindMemory(to: UInt8.self).baseAddress, Int32(raw.count)) == 1
            }
            return updated && EVP_DecryptFinal_ex(context, out.map { $0 + Int(written) }, &final) == 1 && Int(written + final) == input.count
        }
    }

    /// AES-GCM opened into a zeroizing buffer (a key file's private section); nil when the tag does not
    /// authenticate.
    static func aesGCMOpenSecret(key: SecureBytes, iv: [UInt8], ciphertext: Data, tag: Data) -> SecureBytes? {
        guard var plain = aesGCMOpen(key: key, iv: iv, aad: nil, ciphertext: ciphertext, tag: tag) else { return nil }
        defer { plain.resetBytes(in: 0..<plain.count) }
        return plain.withUnsafeBytes { SecureBytes(copying: $0) }
    }
}
