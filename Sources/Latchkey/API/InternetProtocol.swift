/// `kSecAttrProtocol` values: Apple's four-character codes (some end in a space).
public struct InternetProtocol: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
    /// The four-character code, such as "htps".
    public let rawValue: String
    /// Wraps a code.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Wraps a code.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// "ftp ".
    public static let ftp: InternetProtocol = "ftp "
    /// "ftps".
    public static let ftps: InternetProtocol = "ftps"
    /// "http".
    public static let http: InternetProtocol = "http"
    /// "htps".
    public static let https: InternetProtocol = "htps"
    /// "imap".
    public static let imap: InternetProtocol = "imap"
    /// "imps".
    public static let imaps: InternetProtocol = "imps"
    /// "ldap".
    public static let ldap: InternetProtocol = "ldap"
    /// "ldps".
    public static let ldaps: InternetProtocol = "ldps"
    /// "pop3".
    public static let pop3: InternetProtocol = "pop3"
    /// "pops".
    public static let pop3s: InternetProtocol = "pops"
    /// "smtp".
    public static let smtp: InternetProtocol = "smtp"
    /// "ssh ".
    public static let ssh: InternetProtocol = "ssh "
    /// "smb ".
    public static let smb: InternetProtocol = "smb "
    /// "sox " (SOCKS).
    public static let socks: InternetProtocol = "sox "
    /// "teln".
    public static let telnet: InternetProtocol = "teln"
    /// "htpx".
    public static let httpProxy: InternetProtocol = "htpx"
    /// "htsx".
    public static let httpsProxy: InternetProtocol = "htsx"
}

/// `kSecAttrAuthenticationType` values: Apple's four-character codes.
public struct AuthenticationType: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral {
    /// The four-character code, such as "dflt".
    public let rawValue: String
    /// Wraps a code.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Wraps a code.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// "dflt".
    public static let `default`: AuthenticationType = "dflt"
    /// "http" (HTTP Basic).
    public static let httpBasic: AuthenticationType = "http"
    /// "httd" (HTTP Digest).
    public static let httpDigest: AuthenticationType = "httd"
    /// "form" (an HTML form).
    public static let htmlForm: AuthenticationType = "form"
    /// "ntlm".
    public static let ntlm: AuthenticationType = "ntlm"
}
