import FoundationEssentials
package import LatchkeyPKI

/// The attributes Apple's keychain derives from a certificate (`SecCertificateCopyAttributeDictionary`, and
/// the label `SecItemAdd` infers from the subject summary), and the certificate-only search filters.
package enum CertificateAttributes {
    /// The certificate in `data`, or `errSecDecode` naming what is wrong with it (never its bytes).
    static func decode(_ data: Data) throws(KeychainError) -> Certificate {
        do {
            return try Certificate(derRepresentation: data)
        } catch {
            throw KeychainError.decode(
                "kSecValueData of a certificate item must be one DER-encoded X.509 certificate: \(error.reason)")
        }
    }

    /// `ctyp`, `cenc`, `subj`, `issr`, `slnr`, `skid` (when the certificate has one), `pkhh`, and, when
    /// `label` is true, `labl` from the subject summary (when there is one).
    package static func derived(from certificate: Certificate, label: Bool) -> [AttributeKey: AttributeValue] {
        var attributes: [AttributeKey: AttributeValue] = [
            .certificateType: .number(Int64(certificate.certificateType)),
            .certificateEncoding: .number(Int64(certificate.certificateEncoding)),
            .subject: .data(certificate.normalizedSubject),
            .issuer: .data(certificate.normalizedIssuer),
            .serialNumber: .data(certificate.serialNumber),
            .publicKeyHash: .data(certificate.publicKeyHash),
        ]
        if let keyID = certificate.subjectKeyID { attributes[.subjectKeyID] = .data(keyID) }
        if label, let summary = certificate.subjectSummary { attributes[.label] = .string(summary) }
        return attributes
    }

    /// `given` completed with what the certificate in `data` derives: what the caller gave wins, as on
    /// Apple's platforms (a caller may add a certificate under its own label).
    static func completing(
        _ given: [AttributeKey: AttributeValue], data: Data, label: Bool
    ) throws(KeychainError) -> [AttributeKey: AttributeValue] {
        let certificate = try decode(data)
        return given.merging(derived(from: certificate, label: label)) { caller, _ in caller }
    }
}

extension CertificateMatch {
    /// Whether a certificate passes the filters other than `issuers` (which need the keychain and are
    /// checked by the search): the policy, valid on the date, subject containing the text, common name starting
    /// with, ending with or equal to a text, e-mail address present and
    /// equal or absent, trusted by the system's CA store (as Apple's `_FilterWithTrust`: the certificate
    /// alone, basic X.509).
    func admits(_ certificate: Certificate) -> Bool {
        if let policy {
            var evaluation = TrustEvaluation(certificates: [certificate], policies: [policy])
            evaluation.date = validOn
            // Apple builds a chain for the basic policy only; others judge the certificate alone (its own anchor).
            if policy != .basicX509 { evaluation.anchors = [certificate] }
            if evaluation.evaluate().failure != nil { return false }
        }
        if trustedOnly, TrustEvaluation(certificates: [certificate], policies: [.basicX509]).evaluate().failure != nil {
            return false
        }
        if let date = validOn, !certificate.isValid(on: date) { return false }
        var options: String.CompareOptions = []
        if caseInsensitive { options.insert(.caseInsensitive) }
        if diacriticInsensitive { options.insert(.diacriticInsensitive) }
        if widthInsensitive { options.insert(.widthInsensitive) }
        if let text = subjectContains {
            guard certificate.subjectValues.contains(where: { TextFolding.contains($0, text, options: options) }) else {
                return false
            }
        }
        if subjectStartsWith != nil || subjectEndsWith != nil || subjectWholeString != nil {
            // macOS's `FilterCandidateItem`: the common name `SecCertificateCopyCommonName` gives, found with the
            // compare flags (anchored at the start, or at the end); an empty text finds nothing.
            guard let name = certificate.commonNames.last else { return false }
            if let text = subjectStartsWith, !TextFolding.hasPrefix(name, text, options: options) {
                return false
            }
            if let text = subjectEndsWith, !TextFolding.hasSuffix(name, text, options: options) {
                return false
            }
            if let text = subjectWholeString, text.isEmpty || !TextFolding.equal(name, text, options: options) {
                return false
            }
        }
        if let address = emailAddressIfPresent, !certificate.emailAddresses.isEmpty {
            guard
                certificate.emailAddresses.contains(where: { TextFolding.equal($0, address, options: .caseInsensitive) }
                )
            else {
                return false
            }
        }
        return true
    }
}
