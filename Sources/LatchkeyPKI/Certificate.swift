public import FoundationEssentials

/// An X.509 certificate, decoded from DER, with the fields Apple's keychain stores and matches on.
///
/// ```swift
/// let certificate = try Certificate(derRepresentation: der)
/// certificate.subjectSummary    // "www.example.com"
/// certificate.serialNumber      // the serial INTEGER's content octets (kSecAttrSerialNumber)
/// ```
///
/// Two certificates are equal when their DER bytes are.
public struct Certificate: Sendable, Hashable, CustomStringConvertible {
    /// The certificate's DER encoding, exactly as given.
    public let derRepresentation: Data
    /// The X.509 version: 1, 2 or 3.
    public let version: Int
    /// The serial number INTEGER's content octets, a leading 00 kept (`kSecAttrSerialNumber`).
    public let serialNumber: Data
    /// The issuer Name as it appears in the certificate (a DER SEQUENCE).
    public let issuerSequence: Data
    /// The subject Name as it appears in the certificate (a DER SEQUENCE).
    public let subjectSequence: Data
    /// The issuer's normalized Name contents, without the outer SEQUENCE (`kSecAttrIssuer`).
    public let normalizedIssuer: Data
    /// The subject's normalized Name contents, without the outer SEQUENCE (`kSecAttrSubject`).
    public let normalizedSubject: Data
    /// The subject key identifier extension's key identifier (`kSecAttrSubjectKeyID`), when present.
    public let subjectKeyID: Data?
    /// The subjectPublicKey bits: an EC point in X9.63 form, or an RSA PKCS #1 public key.
    public let publicKeyBits: Data
    /// SHA-1 of `publicKeyBits` (`kSecAttrPublicKeyHash`; equals the matching key's `kSecAttrApplicationLabel`).
    public let publicKeyHash: Data
    /// The start of the validity period.
    public let notValidBefore: Date
    /// The end of the validity period.
    public let notValidAfter: Date
    /// The subject's common names, in order (`SecCertificateCopyCommonName` returns the last).
    public let commonNames: [String]
    /// The e-mail addresses: the subject alternative name's rfc822Names, then the subject's emailAddress
    /// attributes (`SecCertificateCopyEmailAddresses`).
    public let emailAddresses: [String]
    /// The subject alternative name's DNS names.
    public let dnsNames: [String]
    /// Apple's one-line summary of the subject (`SecCertificateCopySubjectSummary`): the common names, else
    /// the organizational units, else the organizations, else the other attributes, else the first e-mail
    /// address, else the first DNS name; nil when the certificate has none of them.
    public let subjectSummary: String?
    /// Every text value of the subject, in order (what `kSecMatchSubjectContains` looks in).
    public let subjectValues: [String]

    /// `kSecAttrCertificateType`: CSSM_CERT_X_509v1, v2 or v3 — the version number, 1 to 3.
    public var certificateType: Int { version }
    /// `kSecAttrCertificateEncoding`: 3, CSSM_CERT_ENCODING_DER.
    public var certificateEncoding: Int { 3 }

    /// The normalized issuer as a whole SEQUENCE (`SecCertificateCopyNormalizedIssuerSequence`).
    public var normalizedIssuerSequence: Data { Self.nameSequence(normalizedIssuer) }
    /// The normalized subject as a whole SEQUENCE (`SecCertificateCopyNormalizedSubjectSequence`).
    public var normalizedSubjectSequence: Data { Self.nameSequence(normalizedSubject) }

    /// Name contents wrapped in their SEQUENCE header (what `kSecMatchIssuers` takes).
    package static func nameSequence(_ contents: Data) -> Data { Data(DER.element(DER.sequence, Array(contents))) }

    /// Decodes a DER certificate.
    ///
    /// - Throws: `CertificateError` when the bytes are not exactly one X.509 certificate that OpenSSL
    ///   accepts and whose names Apple's parser would accept.
    public init(derRepresentation der: Data) throws(CertificateError) {
        guard !der.isEmpty else { throw CertificateError("the certificate is empty") }
        guard der.count <= Self.maximumBytes else {
            throw CertificateError("the certificate is \(der.count) bytes; the limit is \(Self.maximumBytes)")
        }
        guard let fields = OpenSSL.decodeCertificate(der) else {
            throw CertificateError("the data is not a DER-encoded X.509 certificate")
        }
        let bytes = [UInt8](der)
        do {
            let tbs = try Self.toBeSigned(bytes)
            let subjectNames = try DistinguishedName.relativeNames(bytes, contents: tbs.subject.contents)
            serialNumber = Data(bytes[tbs.serial.contents])
            issuerSequence = Data(bytes[tbs.issuer.whole])
            subjectSequence = Data(bytes[tbs.subject.whole])
            normalizedIssuer = Data(try DistinguishedName.normalized(bytes, contents: tbs.issuer.contents))
            normalizedSubject = Data(try DistinguishedName.normalized(bytes, contents: tbs.subject.contents))
            commonNames = DistinguishedName.values(subjectNames, type: NameAttribute.commonName)
            emailAddresses =
                fields.emailNames + DistinguishedName.values(subjectNames, type: NameAttribute.emailAddress)
            subjectValues = subjectNames.joined().compactMap(\.text)
            subjectSummary = DistinguishedName.summary(subjectNames) ?? emailAddresses.first ?? fields.dnsNames.first
        } catch {
            throw CertificateError("the certificate's \(error.reason)")
        }
        derRepresentation = der
        version = fields.version
        subjectKeyID = fields.subjectKeyID
        publicKeyBits = fields.publicKeyBits
        publicKeyHash = OpenSSL.sha1(fields.publicKeyBits)
        notValidBefore = fields.notValidBefore
        notValidAfter = fields.notValidAfter
        dnsNames = fields.dnsNames
    }

    /// The normalized contents of a DER Name SEQUENCE (what `kSecMatchIssuers` compares, as Apple's
    /// `SecDistinguishedNameCopyNormalizedContent`); nil when the bytes are not one Name.
    package static func normalizedName(_ sequence: Data) -> Data? {
        let bytes = [UInt8](sequence)
        var reader = DERReader(bytes)
        // Bytes that are not one Name (or whose attributes Apple's parser refuses) normalize to nil, as Apple's.
        guard let name = try? reader.next(tag: DER.sequence, "a name"), reader.isAtEnd,
            let normalized = try? DistinguishedName.normalized(bytes, contents: name.contents)
        else { return nil }
        return Data(normalized)
    }

    /// The subject's public key (`SecCertificateCopyKey`): EC (an uncompressed point on P-256, P-384 or
    /// P-521) or RSA; nil for other kinds.
    public var publicKey: AsymmetricKey? {
        let type: KeyType = publicKeyBits.first == 0x04 ? .ellipticCurve : .rsa
        // Other kinds: nil, as Apple.
        return try? AsymmetricKey(externalRepresentation: publicKeyBits, type: type, isPrivate: false)
    }

    /// SHA-1 of the DER bytes (the fingerprint `security find-certificate -Z` prints and
    /// `delete-certificate -Z` takes).
    public var sha1Fingerprint: Data { OpenSSL.sha1(derRepresentation) }

    /// SHA-256 of the DER bytes.
    public var sha256Fingerprint: Data { OpenSSL.sha256(derRepresentation) }

    /// The largest certificate Latchkey decodes: 1 MiB.
    public static let maximumBytes = 1 << 20

    /// Whether `date` lies within the validity period, as Apple's `kSecMatchValidOnDate` filter decides: a
    /// certificate whose period is empty is valid on no date.
    public func isValid(on date: Date) -> Bool {
        notValidBefore != notValidAfter && date >= notValidBefore && date <= notValidAfter
    }

    /// The subject summary and the size; never more.
    public var description: String {
        "Certificate(\(subjectSummary.map { "\"\($0)\"" } ?? "no subject summary"), \(derRepresentation.count) bytes)"
    }

    public static func == (lhs: Certificate, rhs: Certificate) -> Bool {
        lhs.derRepresentation == rhs.derRepresentation
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(derRepresentation) }

    /// The serial number, issuer and subject elements of the TBSCertificate, read in Swift so that their
    /// bytes are exactly those of the certificate (OpenSSL re-encodes some).
    private static func toBeSigned(_ bytes: [UInt8]) throws(DERError)
        -> (serial: DERElement, issuer: DERElement, subject: DERElement)
    {
        var outer = DERReader(bytes)
        let certificate = try outer.next(tag: DER.sequence, "Certificate")
        var fields = DERReader(bytes, range: certificate.contents)
        let tbs = try fields.next(tag: DER.sequence, "TBSCertificate")
        var reader = DERReader(bytes, range: tbs.contents)
        var element = try reader.next()
        if element.tag == 0xA0 { element = try reader.next() }  // [0] EXPLICIT version
        guard element.tag == DER.integer, !element.contents.isEmpty else {
            throw DERError(reason: "serial number is not an INTEGER")
        }
        let serial = element
        _ = try reader.next(tag: DER.sequence, "signature algorithm")
        let issuer = try reader.next(tag: DER.sequence, "issuer")
        _ = try reader.next(tag: DER.sequence, "validity")
        let subject = try reader.next(tag: DER.sequence, "subject")
        return (serial, issuer, subject)
    }
}

/// Why bytes are not a certificate Latchkey can use. The reason names the structure, never its contents.
public struct CertificateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong.
    public let reason: String

    init(_ reason: String) { self.reason = reason }

    public var description: String { reason }
}
