internal import COpenSSL
import FoundationEssentials
import LatchkeyCrypto

/// An `EVP_PKEY` this side owns: freed when the handle goes.
final class PKeyHandle: @unchecked Sendable {
    // @unchecked: an EVP_PKEY is never changed after it is made, and OpenSSL 3 lets several threads use one
    // key at once (each operation makes its own context).
    let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { latchkey_EVP_PKEY_free(pointer) }
}

// EC and RSA keys: generation, import, what a key is, export, and RSA's CRT exponents.
extension OpenSSL {
    // MARK: Generation and import

    /// `EVP_PKEY_generate` of an EC key on `group` ("P-256", "P-384", "P-521").
    static func generateEC(group: String) -> PKeyHandle? {
        defer { latchkey_ERR_clear_error() }
        guard let context = latchkey_EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
        defer { latchkey_EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard latchkey_EVP_PKEY_keygen_init(context) == 1, latchkey_EVP_PKEY_CTX_set_group_name(context, group) == 1,
            latchkey_EVP_PKEY_generate(context, &key) == 1, let key
        else { return nil }
        return PKeyHandle(key)
    }

    /// `EVP_PKEY_generate` of an RSA key of `bits` (public exponent 65537).
    static func generateRSA(bits: Int) -> PKeyHandle? {
        defer { latchkey_ERR_clear_error() }
        guard let context = latchkey_EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { return nil }
        defer { latchkey_EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard latchkey_EVP_PKEY_keygen_init(context) == 1,
            latchkey_EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1,
            latchkey_EVP_PKEY_generate(context, &key) == 1, let key
        else { return nil }
        return PKeyHandle(key)
    }

    /// An EC key from its X9.63 point (and scalar, for a private key) through `EVP_PKEY_fromdata`, checked:
    /// the point must lie on the curve, and a private key's point must be its scalar's. A scalar without a
    /// point makes a key good for key agreement only (the tests' known-answer vectors give no point).
    ///
    /// `checked` false skips the checks, for bytes the keychain itself stored and authenticated.
    static func importEC(group: String, point: Data?, scalar: SecureBytes?, checked: Bool = true) -> PKeyHandle? {
        defer { latchkey_ERR_clear_error() }
        // The builder keeps pointers to the keys and the group's name (it does not copy them): they must
        // outlive the parameters, so they are static strings.
        let groups: [String: StaticString] = ["P-256": "P-256", "P-384": "P-384", "P-521": "P-521"]
        guard let groupName = groups[group], let builder = latchkey_OSSL_PARAM_BLD_new() else { return nil }
        defer { latchkey_OSSL_PARAM_BLD_free(builder) }
        var privateNumber: OpaquePointer?
        defer { if let privateNumber { latchkey_BN_clear_free(privateNumber) } }
        guard latchkey_OSSL_PARAM_BLD_push_utf8_string(builder, cString("group"), cString(groupName), 0) == 1 else {
            return nil
        }
        if let point {
            let pushed = point.withUnsafeBytes { raw in
                latchkey_OSSL_PARAM_BLD_push_octet_string(builder, cString("pub"), raw.baseAddress, raw.count) == 1
            }
            guard pushed else { return nil }
        }
        if let scalar {
            privateNumber = scalar.withUnsafeBytes { raw in
                latchkey_BN_bin2bn(raw.bindMemory(to: UInt8.self).baseAddress, Int32(raw.count), nil)
            }
            guard let privateNumber, latchkey_OSSL_PARAM_BLD_push_BN(builder, cString("priv"), privateNumber) == 1
            else {
                return nil
            }
        }
        guard let parameters = latchkey_OSSL_PARAM_BLD_to_param(builder) else { return nil }
        defer {
            // OpenSSL 3.0 has no OSSL_PARAM_clear_free: the copy of the scalar is wiped here before the free.
            if let scalarParameter = latchkey_OSSL_PARAM_locate(parameters, "priv"),
                let data = scalarParameter.pointee.data
            {
                wipeBytes(UnsafeMutableRawBufferPointer(start: data, count: scalarParameter.pointee.data_size))
            }
            latchkey_OSSL_PARAM_free(parameters)
        }
        guard let context = latchkey_EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
        defer { latchkey_EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        let selection = scalar == nil ? latchkey_selection_public_key() : latchkey_selection_keypair()
        guard latchkey_EVP_PKEY_fromdata_init(context) == 1,
            latchkey_EVP_PKEY_fromdata(context, &key, selection, parameters) == 1,
            let key
        else { return nil }
        let handle = PKeyHandle(key)
        if point == nil || !checked { return handle }
        guard let check = latchkey_EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { return nil }
        defer { latchkey_EVP_PKEY_CTX_free(check) }
        guard latchkey_EVP_PKEY_public_check(check) == 1, scalar == nil || latchkey_EVP_PKEY_pairwise_check(check) == 1
        else {
            return nil
        }
        return handle
    }

    /// An RSA public key from PKCS #1 RSAPublicKey DER, or from a SubjectPublicKeyInfo.
    static func importRSAPublic(_ der: Data) -> PKeyHandle? {
        defer { latchkey_ERR_clear_error() }
        return der.withUnsafeBytes { raw -> PKeyHandle? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            if let key = latchkey_d2i_PublicKey(latchkey_pkey_rsa(), nil, &cursor, raw.count) {
                let handle = PKeyHandle(key)  // Owned (and freed) before any other check.
                if cursor == base + raw.count { return handle }
            }
            cursor = base
            guard let key = latchkey_d2i_PUBKEY(nil, &cursor, raw.count) else { return nil }
            let handle = PKeyHandle(key)
            guard cursor == base + raw.count, latchkey_EVP_PKEY_get_base_id(key) == latchkey_pkey_rsa() else {
                return nil
            }
            return handle
        }
    }

    /// An RSA private key from PKCS #1 RSAPrivateKey DER, checked for consistency (unless `checked` is
    /// false, for bytes the keychain itself stored and authenticated: the check tests the primes, ~35 ms at
    /// 2048 bits).
    static func importRSAPrivate(_ der: SecureBytes, checked: Bool = true) -> PKeyHandle? {
        defer { latchkey_ERR_clear_error() }
        return der.withUnsafeBytes { raw -> PKeyHandle? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let key = latchkey_d2i_PrivateKey(latchkey_pkey_rsa(), nil, &cursor, raw.count) else { return nil }
            let handle = PKeyHandle(key)
            guard cursor == base + raw.count else { return nil }
            if !checked { return handle }
            guard let check = latchkey_EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { return nil }
            defer { latchkey_EVP_PKEY_CTX_free(check) }
            return latchkey_EVP_PKEY_check(check) == 1 ? handle : nil
        }
    }

    // MARK: What a key is

    static func isRSA(_ key: PKeyHandle) -> Bool { latchkey_EVP_PKEY_get_base_id(key.pointer) == latchkey_pkey_rsa() }
    static func isEC(_ key: PKeyHandle) -> Bool { latchkey_EVP_PKEY_get_base_id(key.pointer) == latchkey_pkey_ec() }
    static func bits(_ key: PKeyHandle) -> Int { Int(latchkey_EVP_PKEY_get_bits(key.pointer)) }
    /// The largest signature or ciphertext the key makes (`EVP_PKEY_get_size`).
    static func maximumOutput(_ key: PKeyHandle) -> Int { Int(latchkey_EVP_PKEY_get_size(key.pointer)) }

    /// Whether the key holds its private half.
    static func hasPrivate(_ key: PKeyHandle) -> Bool {
        defer { latchkey_ERR_clear_error() }
        if isEd25519(key) {
            var length = 0
            return latchkey_EVP_PKEY_get_raw_private_key(key.pointer, nil, &length) == 1 && length > 0
        }
        if isRSA(key) {
            var number: OpaquePointer?
            defer { if let number { latchkey_BN_clear_free(number) } }
            return latchkey_EVP_PKEY_get_bn_param(key.pointer, "d", &number) == 1 && number != nil
        }
        var number: OpaquePointer?
        defer { if let number { latchkey_BN_clear_free(number) } }
        return latchkey_EVP_PKEY_get_bn_param(key.pointer, "priv", &number) == 1 && number != nil
    }

    // MARK: Export

    /// An EC key's uncompressed X9.63 point.
    static func ecPoint(_ key: PKeyHandle) -> Data? {
        defer { latchkey_ERR_clear_error() }
        var buffer: UnsafeMutablePointer<UInt8>?
        let count = latchkey_EVP_PKEY_get1_encoded_public_key(key.pointer, &buffer)
        guard count > 0, let buffer else { return nil }
        defer { latchkey_openssl_free(buffer) }
        return Data(bytes: buffer, count: count)
    }

    /// An EC private key's scalar, left-padded to `length` bytes.
    static func ecScalar(_ key: PKeyHandle, length: Int) -> SecureBytes? {
        defer { latchkey_ERR_clear_error() }
        var number: OpaquePointer?
        guard latchkey_EVP_PKEY_get_bn_param(key.pointer, "priv", &number) == 1, let number else { return nil }
        defer { latchkey_BN_clear_free(number) }
        return secureBytes(count: length) { buffer in
            latchkey_BN_bn2binpad(number, buffer.bindMemory(to: UInt8.self).baseAddress, Int32(length)) == Int32(length)
        }
    }

    /// An RSA key's PKCS #1 DER: RSAPublicKey, or RSAPrivateKey when `privateKey`.
    static func rsaDER(_ key: PKeyHandle, privateKey: Bool) -> SecureBytes? {
        defer { latchkey_ERR_clear_error() }
        let count = privateKey ? latchkey_i2d_PrivateKey(key.pointer, nil) : latchkey_i2d_PublicKey(key.pointer, nil)
        guard count > 0 else { return nil }
        return secureBytes(count: Int(count)) { buffer in
            var cursor: UnsafeMutablePointer<UInt8>? = buffer.bindMemory(to: UInt8.self).baseAddress
            return
                (privateKey
                ? latchkey_i2d_PrivateKey(key.pointer, &cursor) : latchkey_i2d_PublicKey(key.pointer, &cursor)) == count
        }
    }

    // MARK: RSA's CRT exponents (an SSH agent is given n, e, d, p, q and iqmp, PKCS #1 needs dP and dQ too)

    /// d mod (p − 1) and d mod (q − 1), each as long as its prime; nil when a prime is 0 or 1.
    static func rsaCRTExponents(privateExponent: SecureBytes, prime1: SecureBytes, prime2: SecureBytes) -> (
        SecureBytes, SecureBytes
    )? {
        defer { latchkey_ERR_clear_error() }
        guard let context = latchkey_BN_CTX_new() else { return nil }
        defer { latchkey_BN_CTX_free(context) }
        func number(_ bytes: SecureBytes) -> OpaquePointer? {
            bytes.withUnsafeBytes {
                latchkey_BN_bin2bn($0.bindMemory(to: UInt8.self).baseAddress, Int32($0.count), nil)
            }
        }
        guard let d = number(privateExponent) else { return nil }
        defer { latchkey_BN_clear_free(d) }
        latchkey_BN_set_flags(d, BN_FLG_CONSTTIME)
        func exponent(for prime: SecureBytes) -> SecureBytes? {
            guard let p = number(prime) else { return nil }
            defer { latchkey_BN_clear_free(p) }
            guard let result = latchkey_BN_new() else { return nil }
            defer { latchkey_BN_clear_free(result) }
            guard latchkey_BN_num_bits(p) >= 2, latchkey_BN_sub_word(p, 1) == 1,
                latchkey_BN_div(nil, result, d, p, context) == 1
            else {
                return nil
            }
            return secureBytes(count: prime.count, lifetime: .transient) { buffer in
                latchkey_BN_bn2binpad(result, buffer.bindMemory(to: UInt8.self).baseAddress, Int32(buffer.count))
                    == Int32(buffer.count)
            }
        }
        guard let first = exponent(for: prime1), let second = exponent(for: prime2) else { return nil }
        return (first, second)
    }
}
