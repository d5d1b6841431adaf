/// The class of a keychain item (`kSecClass`), with Apple's four-letter codes.
public enum ItemClass: String, CaseIterable, Hashable, Sendable {
    /// `kSecClassGenericPassword` ("genp"): a password or token for a service and account.
    case genericPassword = "genp"
    /// `kSecClassInternetPassword` ("inet"): a password for a server, protocol, port and path.
    case internetPassword = "inet"
    /// `kSecClassCertificate` ("cert").
    case certificate = "cert"
    /// `kSecClassKey` ("keys"): a cryptographic key.
    case key = "keys"
    /// `kSecClassIdentity` ("idnt"): a certificate joined with its private key. A virtual class with no
    /// table of its own; Latchkey will support it once certificates are parsed (see the roadmap).
    case identity = "idnt"

    /// The classes that are stored as rows (all but `identity`).
    public static let stored: [ItemClass] = [.genericPassword, .internetPassword, .certificate, .key]
}
