public import Foundation
public import Latchkey

/// `SecCertificate`: an X.509 certificate. Make one with `SecCertificateCreateWithData`, store it with
/// `SecItemAdd` (`kSecValueRef`, or its DER bytes as `kSecValueData`), and get it back from
/// `SecItemCopyMatching` with `kSecReturnRef`. Equal certificates (same DER bytes) compare and hash equal.
///
/// ```swift
/// guard let certificate = SecCertificateCreateWithData(nil, der as CFData) else { return }
/// let status = SecItemAdd([kSecClass: kSecClassCertificate, kSecValueRef: certificate] as CFDictionary, nil)
/// ```
public final class SecCertificate: NSObject, CertificateConvertible, @unchecked Sendable {
    // @unchecked: immutable (one `Certificate` value).
    /// The decoded certificate.
    public let certificate: Certificate

    /// Wraps a decoded certificate.
    public init(_ certificate: Certificate) {
        self.certificate = certificate
        super.init()
    }

    /// Equal DER bytes.
    public override func isEqual(_ object: Any?) -> Bool {
        (object as? SecCertificate)?.certificate == certificate
    }

    /// Consistent with `isEqual`.
    public override var hash: Int { certificate.hashValue }

    /// `<SecCertificate "www.example.com">`: the subject summary, never more.
    public override var description: String {
        "<SecCertificate \(certificate.subjectSummary.map { "\"\($0)\"" } ?? "without a subject summary")>"
    }
}

/// `SecCertificateCreateWithData`: the certificate in `data` (DER), or nil when the bytes are not exactly
/// one X.509 certificate. `allocator` is ignored.
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? {
    do {
        return SecCertificate(try Certificate(derRepresentation: Data(referencing: data)))
    } catch {
        return nil  // Apple's contract: nil for anything that is not a certificate, with no error to give.
    }
}

/// `SecCertificateCopyData`: the certificate's DER bytes, exactly as it was made from.
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData {
    NSData(data: certificate.certificate.derRepresentation)
}

/// `SecCertificateCopySubjectSummary`: Apple's one-line summary of the subject (the common names, else the
/// organizational units, else the organizations, else the other attributes, else the first e-mail
/// address, else the first DNS name); nil when there is none.
public func SecCertificateCopySubjectSummary(_ certificate: SecCertificate) -> CFString? {
    certificate.certificate.subjectSummary.map { NSString(string: $0) }
}

/// `SecCertificateCopyCommonName`: the subject's last common name; `errSecInternal` when it has none (as on
/// Apple's platforms).
public func SecCertificateCopyCommonName(
    _ certificate: SecCertificate, _ commonName: UnsafeMutablePointer<CFString?>
) -> OSStatus {
    guard let name = certificate.certificate.commonNames.last else { return errSecInternal }
    commonName.pointee = NSString(string: name)
    return errSecSuccess
}

/// `SecCertificateCopyEmailAddresses`: the subject alternative name's e-mail addresses, then the subject's
/// emailAddress attributes; an empty array when there are none.
public func SecCertificateCopyEmailAddresses(
    _ certificate: SecCertificate, _ emailAddresses: UnsafeMutablePointer<CFArray?>
) -> OSStatus {
    emailAddresses.pointee = NSArray(array: certificate.certificate.emailAddresses.map { NSString(string: $0) })
    return errSecSuccess
}

/// `SecCertificateCopySerialNumberData`: the serial number INTEGER's content octets (`kSecAttrSerialNumber`).
/// `error` is left alone: a decoded certificate always has one.
public func SecCertificateCopySerialNumberData(
    _ certificate: SecCertificate, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? {
    NSData(data: certificate.certificate.serialNumber)
}

/// `SecCertificateCopyNormalizedIssuerSequence`: the issuer, normalized as `kSecAttrIssuer` holds it, as a
/// whole DER SEQUENCE (what `kSecMatchIssuers` takes).
public func SecCertificateCopyNormalizedIssuerSequence(_ certificate: SecCertificate) -> CFData? {
    NSData(data: certificate.certificate.normalizedIssuerSequence)
}

/// `SecCertificateCopyNormalizedSubjectSequence`: the subject, normalized as `kSecAttrSubject` holds it, as
/// a whole DER SEQUENCE.
public func SecCertificateCopyNormalizedSubjectSequence(_ certificate: SecCertificate) -> CFData? {
    NSData(data: certificate.certificate.normalizedSubjectSequence)
}
