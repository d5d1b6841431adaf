import Foundation

/// The committed certificates of Tests/Fixtures/certificates (made by Tests/Tools/make-certificates.py with
/// Python's `cryptography`; expected.json holds what that generator derived from each).
public enum CertificateFixtures {
    /// The directory holding them.
    public static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/certificates")

    /// The DER bytes of one fixture ("leaf-ec256.der", "root-rsa.der", …).
    public static func der(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }
}
