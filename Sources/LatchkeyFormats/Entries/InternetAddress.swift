/// A login's URL as an internet password's attributes hold it: scheme (as Apple's four-character protocol
/// code when it has one), host, port and the rest of the URL as the path. `text` rebuilds the URL; an entry
/// whose URL does not come back the same keeps the URL as written too (`EntryMapping`).
package struct InternetAddress: Sendable, Hashable {
    /// The scheme as written ("https"), nil for a bare host ("example.com/login").
    package var scheme: String?
    package var host: String
    package var port: Int?
    /// Everything after the host and port: path, query and fragment ("/login?next=%2F").
    package var path: String

    package init(scheme: String?, host: String, port: Int?, path: String) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.path = path
    }

    /// Apple's protocol codes (`kSecAttrProtocol…`) by URL scheme.
    package static let protocolCodes: [String: String] = [
        "ftp": "ftp ", "ftps": "ftps", "http": "http", "https": "htps", "imap": "imap", "imaps": "imps",
        "ldap": "ldap", "ldaps": "ldps", "pop3": "pop3", "pop3s": "pops", "smtp": "smtp", "ssh": "ssh ",
        "smb": "smb ", "socks": "sox ", "telnet": "teln",
    ]

    /// The URL scheme of each protocol code.
    package static let schemes: [String: String] = Dictionary(
        uniqueKeysWithValues: protocolCodes.map { ($0.value, $0.key) })

    /// The protocol code of the scheme, if Apple has one for it.
    package var protocolCode: String? { scheme.flatMap { Self.protocolCodes[$0.lowercased()] } }

    /// The address of a URL ("https://example.com:8443/login", or a bare "example.com"); nil for text that
    /// names no host: words, a URL with credentials in it, a KeePass field reference, an app's identifier.
    package static func parse(_ url: String) -> InternetAddress? {
        var rest = Substring(url)
        var scheme: String?
        if let range = url.firstRange(of: "://") {
            let name = url[..<range.lowerBound]
            guard let first = name.first, first.isASCII, first.isLetter,
                name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) })
            else { return nil }
            scheme = String(name)
            rest = url[range.upperBound...]
        }
        let end = rest.firstIndex { "/?#".contains($0) } ?? rest.endIndex
        let authority = rest[..<end]
        let path = String(rest[end...])
        guard !authority.isEmpty, !authority.contains("@"), !authority.contains(where: \.isWhitespace),
            !path.contains(where: { $0.isWhitespace || $0.isNewline })
        else { return nil }
        var host = authority
        var port: Int?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let number = Self.port(after.dropFirst()) else { return nil }
                port = number
            }
        } else if let colon = authority.firstIndex(of: ":") {
            guard let number = Self.port(authority[authority.index(after: colon)...]) else { return nil }
            host = authority[..<colon]
            port = number
        }
        guard !host.isEmpty, !host.contains("\\") else { return nil }
        // Without a scheme, only what reads as a host name: "example.com", not "My bank".
        if scheme == nil, !host.contains(".") || host.hasPrefix(".") || host.hasSuffix(".") { return nil }
        return InternetAddress(scheme: scheme, host: String(host), port: port, path: path)
    }

    /// A port written in decimal digits, 0 to 65535, without a sign or leading zeros beyond "0".
    static func port(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy({ $0.isASCII && $0.isNumber }),
            text == "0" || !text.hasPrefix("0"), let value = Int(text), value <= 65_535
        else { return nil }
        return value
    }

    /// The URL again: `scheme://host:port/path`, or `host:port/path` without a scheme.
    package var text: String {
        (scheme.map { $0 + "://" } ?? "") + host + (port.map { ":\($0)" } ?? "") + path
    }
}
