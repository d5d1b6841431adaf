/// Why a key operation failed: Apple's status (as its number) and what was wrong — never key material or
/// data.
public struct KeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which of Apple's statuses the failure is.
    public enum Kind: Int32, Sendable {
        /// `errSecParam` (−50): bad input, an algorithm the key does not support, a failed decryption.
        case param = -50
        /// `errSecVerifyFailed` (−67808): a signature that does not verify.
        case verifyFailed = -67808
        /// `errSecDecode` (−26275): key bytes that are not a key.
        case decode = -26275
        /// `errSecUnimplemented` (−4): an algorithm Latchkey does not offer.
        case unimplemented = -4
        /// `errSecAuthFailed` (−25293): a wrong passphrase (PKCS #12).
        case authFailed = -25293
    }

    /// The kind, whose raw value is Apple's status.
    public let kind: Kind
    /// What exactly was wrong.
    public let reason: String

    /// Creates an error.
    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    public var description: String { reason }
}
