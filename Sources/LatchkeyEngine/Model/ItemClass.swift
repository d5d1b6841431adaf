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
    /// rows of its own: the SecItem functions (the dictionary layer) compose it from certificates and keys;
    /// the engine's own operations refuse it with `errSecUnimplemented`.
    case identity = "idnt"

    /// The classes that are stored as rows (all but `identity`).
    public static let stored: [ItemClass] = [.genericPassword, .internetPassword, .certificate, .key]

    /// The class's own primary-key attributes, in Apple's order (the access group and the synchronizable
    /// flag complete every class's key): two items agreeing on all of them are duplicates. Empty for
    /// `identity`. The engine's schema is the one place this is defined; the command line asks it.
    public var primaryKey: [AttributeKey] { ItemSchema.of(self)?.primaryKey ?? [] }
}
