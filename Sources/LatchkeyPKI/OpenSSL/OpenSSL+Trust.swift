internal import COpenSSL
import FoundationEssentials

// Trust: `X509_verify_cert` and Apple's statuses for its errors.
extension OpenSSL {
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
        defer { latchkey_ERR_clear_error() }
        guard let store = latchkey_X509_STORE_new() else { return nil }
        defer { latchkey_X509_STORE_free(store) }
        // A missing store leaves only the anchors.
        if !request.anchorsOnly { _ = latchkey_X509_STORE_set_default_paths(store) }
        for anchor in request.anchors {
            guard let certificate = loadCertificate(anchor) else { return nil }
            defer { latchkey_X509_free(certificate) }
            _ = latchkey_X509_STORE_add_cert(store, certificate)  // Fails only for a duplicate, which changes nothing.
        }
        guard let leaf = loadCertificate(request.leaf) else { return nil }
        defer { latchkey_X509_free(leaf) }
        guard let untrusted = latchkey_certificates_new() else { return nil }
        defer { latchkey_certificates_free(untrusted) }
        for intermediate in request.intermediates {
            guard let certificate = loadCertificate(intermediate) else { return nil }
            guard latchkey_certificates_push(untrusted, certificate) > 0 else {
                latchkey_X509_free(certificate)
                return nil
            }
        }
        guard let context = latchkey_X509_STORE_CTX_new() else { return nil }
        defer { latchkey_X509_STORE_CTX_free(context) }
        guard latchkey_X509_STORE_CTX_init(context, store, leaf, untrusted) == 1,
            let parameters = latchkey_X509_STORE_CTX_get0_param(context)
        else { return nil }
        if !request.anchors.isEmpty {
            _ = latchkey_X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN))
        }
        if let date = request.date {
            latchkey_X509_VERIFY_PARAM_set_time(parameters, time_t(date.timeIntervalSince1970.rounded(.down)))
        }
        if let server = request.sslServer {
            guard
                latchkey_X509_STORE_CTX_set_purpose(context, server ? X509_PURPOSE_SSL_SERVER : X509_PURPOSE_SSL_CLIENT)
                    == 1
            else { return nil }
        }
        if let host = request.hostname, !host.isEmpty {
            let isAddress = latchkey_X509_VERIFY_PARAM_set1_ip_asc(parameters, host) == 1
            if !isAddress {
                latchkey_ERR_clear_error()
                guard latchkey_X509_VERIFY_PARAM_set1_host(parameters, host, host.utf8.count) == 1 else { return nil }
            }
        }
        let verified = latchkey_X509_verify_cert(context) == 1
        var chain: [Data] = []
        if let built = latchkey_X509_STORE_CTX_get1_chain(context) {
            defer { latchkey_certificates_free(built) }
            for index in 0..<latchkey_certificates_count(built) {
                if let certificate = latchkey_certificate_at(built, index), let der = encode(certificate) {
                    chain.append(der)
                }
            }
        }
        if verified { return Verification(chain: chain, error: nil) }
        let code = latchkey_X509_STORE_CTX_get_error(context)
        let message = latchkey_X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
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
}
