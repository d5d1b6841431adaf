import Foundation

/// The committed certificates of Tests/Fixtures/certificates (made by Tests/Tools/make-certificates.py with
/// Python's `cryptography`; expected.json holds what that generator derived from each).
public enum CertificateFixtures {
    /// The directory holding them.
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("Fixtures/certificates")

    /// The DER bytes of one fixture ("leaf-ec256.der", "root-rsa.der", …).
    public static func der(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }
}

/// Certificates issued for a public key made elsewhere (a key the keychain holds, say): Python's
/// `cryptography` plays a throwaway CA.
public enum CertificateIssuer {
    /// A DER certificate for the P-256 public key `point` (X9.63), subject CN `commonName`, valid from a day
    /// ago for 30 days, signed by a fresh CA key.
    public static func issue(publicKeyPoint point: Data, commonName: String) throws -> Data {
        let script = """
            import sys, datetime
            from cryptography import x509
            from cryptography.x509.oid import NameOID
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import ec
            subject_key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), bytes.fromhex(sys.argv[1]))
            ca = ec.generate_private_key(ec.SECP256R1())
            now = datetime.datetime.now(datetime.timezone.utc)
            certificate = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, sys.argv[2])]))
                .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Throwaway CA")]))
                .public_key(subject_key).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
                .sign(ca, hashes.SHA256()))
            sys.stdout.buffer.write(certificate.public_bytes(serialization.Encoding.DER))
            """
        let output = try HelperProcess.run(
            "/usr/bin/python3", ["-c", script, point.map { String(format: "%02x", $0) }.joined(), commonName])
        let der = output.stdoutBytes
        guard output.status == 0, !der.isEmpty else {
            throw CocoaError(
                .fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "python3 could not issue the certificate"])
        }
        return der
    }
}
