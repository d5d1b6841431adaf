internal import COpenSSL
import FoundationEssentials
import LatchkeyCrypto

// PKCS #12 files: the cost of their key derivations, opening one, making one.
extension OpenSSL {
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
                return cost > maximumScrypt
                    ? "\(what) asks for an scrypt cost (N·r·p) of \(cost); at most \(maximumScrypt) is accepted" : nil
            }
            return iterations(cost, what)
        }

        /// Why `count` iterations for `what` are too many, or nil.
        static func iterations(_ count: UInt64, _ what: String) -> String? {
            count > maximumIterations
                ? "\(what) asks for \(count) iterations of its key derivation; at most \(maximumIterations) are accepted"
                : nil
        }
    }

    /// Why decrypting a PKCS #12 file (whose MAC was checked) would cost too much — each encrypted safe's and
    /// each encrypted key's derivation, checked before it is used — or nil.
    private static func excessiveCost(_ file: OpaquePointer, password: String?) -> String? {
        // PKCS12_parse says what is wrong.
        guard let safes = latchkey_PKCS12_unpack_authsafes(file) else { return nil }
        defer { latchkey_pkcs7_free_all(safes) }
        for index in 0..<latchkey_pkcs7_count(safes) {
            guard let safe = latchkey_pkcs7_at(safes, index) else { continue }
            let bags: OpaquePointer?
            switch latchkey_pkcs7_nid(safe) {
            case NID_pkcs7_data: bags = latchkey_PKCS12_unpack_p7data(safe)
            case NID_pkcs7_encrypted:
                if let excess = PasswordCost.excess(
                    latchkey_pkcs7_encryption(safe), "an encrypted part of the PKCS #12 file")
                {
                    return excess
                }
                bags = latchkey_PKCS12_unpack_p7encdata(safe, password, password.map { Int32($0.utf8.count) } ?? 0)
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
            switch latchkey_PKCS12_SAFEBAG_get_nid(bag) {
            case NID_pkcs8ShroudedKeyBag:
                var algorithm: UnsafePointer<X509_ALGOR>?
                latchkey_X509_SIG_get0(latchkey_PKCS12_SAFEBAG_get0_pkcs8(bag), &algorithm, nil)
                if let excess = PasswordCost.excess(algorithm, "the PKCS #12 file's private key") { return excess }
            case NID_safeContentsBag:
                if let inner = latchkey_PKCS12_SAFEBAG_get0_safes(bag), let excess = excessiveCost(bags: inner) {
                    return excess
                }
            default: continue
            }
        }
        return nil
    }

    /// Loads OpenSSL's "legacy" provider (beside "default") once, so files made by older tools — RC2-40 and
    /// Triple DES — decrypt. It only makes those algorithms available; Latchkey chooses its own explicitly.
    private static let legacyProviders: LoadedProviders = {
        defer { latchkey_ERR_clear_error() }
        return LoadedProviders(
            legacy: latchkey_OSSL_PROVIDER_load(nil, "legacy"), standard: latchkey_OSSL_PROVIDER_load(nil, "default"))
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
        defer { latchkey_ERR_clear_error() }
        _ = legacyProviders  // Without them only modern files open; their import still works.
        return der.withUnsafeBytes { raw -> Result<PKCS12Contents, PKCS12Failure> in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else {
                return .failure(.malformed)
            }
            var cursor: UnsafePointer<UInt8>? = base
            guard let file = latchkey_d2i_PKCS12(nil, &cursor, raw.count) else { return .failure(.malformed) }
            defer { latchkey_PKCS12_free(file) }  // Before any other check: a file followed by junk is freed too.
            guard cursor == base + raw.count else { return .failure(.malformed) }
            // The MAC's cost before the MAC is computed (the rest once the passphrase is known to be right).
            var macIterations: UnsafePointer<ASN1_INTEGER>?
            latchkey_PKCS12_get0_mac(nil, nil, nil, &macIterations, file)
            if let macIterations {
                var count: UInt64 = 0
                guard latchkey_ASN1_INTEGER_get_uint64(&count, macIterations) == 1 else { return .failure(.malformed) }
                if let excess = PasswordCost.iterations(count, "the PKCS #12 file's MAC") {
                    return .failure(.tooCostly(excess))
                }
            }
            // A file without a MAC is not checked; an empty passphrase may have been given to the MAC as none.
            let password: String?
            if latchkey_PKCS12_mac_present(file) != 1
                || latchkey_PKCS12_verify_mac(file, passphrase, Int32(passphrase.utf8.count)) == 1
            {
                password = passphrase
            } else if passphrase.isEmpty && latchkey_PKCS12_verify_mac(file, nil, 0) == 1 {
                password = nil
            } else {
                return .failure(.wrongPassphrase)
            }
            if let excess = excessiveCost(file, password: password) { return .failure(.tooCostly(excess)) }
            var key: OpaquePointer?
            var certificate: OpaquePointer?
            var others: OpaquePointer?
            guard latchkey_PKCS12_parse(file, password, &key, &certificate, &others) == 1 else {
                return .failure(.malformed)
            }
            defer {
                if let certificate { latchkey_X509_free(certificate) }
                if let others { latchkey_certificates_free(others) }
            }
            var contents = PKCS12Contents()
            if let key { contents.key = PKeyHandle(key) }
            if let certificate {
                contents.certificate = encode(certificate)
                var length: Int32 = 0
                if let alias = latchkey_X509_alias_get0(certificate, &length), length > 0 {
                    contents.friendlyName = String(
                        decoding: UnsafeBufferPointer(start: alias, count: Int(length)), as: UTF8.self)
                }
                if let keyID = latchkey_X509_keyid_get0(certificate, &length), length > 0 {
                    contents.localKeyID = Data(bytes: keyID, count: Int(length))
                }
            }
            if let others {
                for index in 0..<latchkey_certificates_count(others) {
                    if let other = latchkey_certificate_at(others, index), let der = encode(other) {
                        contents.chain.append(der)
                    }
                }
            }
            return .success(contents)
        }
    }

    /// `PKCS12_create` with OpenSSL's default algorithms, then `i2d_PKCS12`.
    static func makePKCS12(key: PKeyHandle, certificate: Data, chain: [Data], passphrase: String, name: String?)
        -> Data?
    {
        defer { latchkey_ERR_clear_error() }
        guard let leaf = loadCertificate(certificate) else { return nil }
        defer { latchkey_X509_free(leaf) }
        guard let others = latchkey_certificates_new() else { return nil }
        defer { latchkey_certificates_free(others) }
        for der in chain {
            guard let other = loadCertificate(der) else { return nil }
            guard latchkey_certificates_push(others, other) > 0 else {
                latchkey_X509_free(other)
                return nil
            }
        }
        guard let file = latchkey_PKCS12_create(passphrase, name, key.pointer, leaf, others, 0, 0, 0, 0, 0) else {
            return nil
        }
        defer { latchkey_PKCS12_free(file) }
        return encodeDER { latchkey_i2d_PKCS12(file, $0) }
    }
}
