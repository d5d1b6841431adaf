internal import COpenSSL
import FoundationEssentials

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

// Certificates: decoding X.509 DER (`d2i_X509` and the getters), loading and encoding one.
extension OpenSSL {
    /// `d2i_X509` and the getters: nil when OpenSSL refuses the bytes as a certificate, when bytes follow
    /// the certificate, or when a field Latchkey needs is missing. OpenSSL's error queue is cleared either
    /// way, so no failure leaks into a later call.
    static func decodeCertificate(_ der: Data) -> X509Fields? {
        defer { latchkey_ERR_clear_error() }
        return der.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> X509Fields? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let certificate = latchkey_d2i_X509(nil, &cursor, raw.count) else { return nil }
            defer { latchkey_X509_free(certificate) }
            guard cursor == base + raw.count else { return nil }
            let version = Int(latchkey_X509_get_version(certificate)) + 1
            guard (1...3).contains(version),
                let bits = latchkey_X509_get0_pubkey_bitstr(certificate),
                let notBefore = date(latchkey_X509_get0_notBefore(certificate)),
                let notAfter = date(latchkey_X509_get0_notAfter(certificate))
            else { return nil }
            // X509_get0_subject_key_id also caches the extensions; a malformed one marks the certificate
            // invalid, which Latchkey then refuses as Apple's parser does.
            let keyID = latchkey_X509_get0_subject_key_id(certificate).map(bytes)
            guard latchkey_X509_get_extension_flags(certificate) & UInt32(EXFLAG_INVALID) == 0 else { return nil }
            var fields = X509Fields(
                version: version, subjectKeyID: keyID, publicKeyBits: bytes(bits), notValidBefore: notBefore,
                notValidAfter: notAfter, emailNames: [], dnsNames: [])
            var critical: Int32 = 0
            if let names = latchkey_X509_get_ext_d2i(certificate, NID_subject_alt_name, &critical, nil) {
                let list = OpaquePointer(names)
                defer { latchkey_GENERAL_NAMES_free(list) }
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

    private static func bytes(_ string: UnsafePointer<ASN1_STRING>) -> Data {
        let count = Int(latchkey_ASN1_STRING_length(string))
        guard count > 0, let start = latchkey_ASN1_STRING_get0_data(string) else { return Data() }
        return Data(bytes: start, count: count)
    }

    private static func bytes(_ string: UnsafeMutablePointer<ASN1_STRING>) -> Data {
        bytes(UnsafePointer(string))
    }

    /// `ASN1_TIME_to_tm`, then the calendar date as seconds since 1970 (UTC, proleptic Gregorian).
    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time else { return nil }
        var parts = tm()
        guard latchkey_ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
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

    /// Whether `d2i_X509` takes `der` as one whole certificate: the parse alone, the benchmark's floor for
    /// decoding a certificate.
    static func parsesAsCertificate(_ der: Data) -> Bool {
        defer { latchkey_ERR_clear_error() }
        guard let certificate = loadCertificate(der) else { return false }
        latchkey_X509_free(certificate)
        return true
    }

    /// `d2i_X509` of a whole DER certificate (the caller frees it with `X509_free`).
    static func loadCertificate(_ der: Data) -> OpaquePointer? {
        der.withUnsafeBytes { raw -> OpaquePointer? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, raw.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = base
            guard let certificate = latchkey_d2i_X509(nil, &cursor, raw.count) else { return nil }
            guard cursor == base + raw.count else {
                latchkey_X509_free(certificate)
                return nil
            }
            return certificate
        }
    }

    /// `i2d_X509`.
    static func encode(_ certificate: OpaquePointer) -> Data? { encodeDER { latchkey_i2d_X509(certificate, $0) } }
}
