import Foundation

/// A registry's server URL split as docker-credential-osxkeychain splits it (its `registryurl.Parse` over Go's
/// `net/url`, and `splitServer`): a URL without a scheme is read as `//host…`; the scheme must be http, https
/// or none (https); the host is required; the query and fragment are dropped; the path is kept,
/// percent-decoded ("" when there is none).
///
/// Read strictly, by this parser alone, so that no two readers can disagree on which host a URL names (a
/// lenient parser read `https://evil.example\@registry.example.com` as the registry's host): a character RFC
/// 3986 does not allow anywhere (a backslash, a space, a control character, anything not ASCII), user
/// information (any `@` before the host, however the rest is spelt), a percent sign in the host, a host
/// character other than RFC 3986's unreserved ones, a malformed escape, port or IPv6 literal are refused —
/// where Go's parser refuses them, in its words.
enum RegistryURL {
    /// Why a server URL cannot name a registry.
    struct Invalid: Error, Equatable, CustomStringConvertible {
        let description: String

        init(_ description: String) { self.description = description }
    }

    /// The location of the items for `serverURL`.
    static func location(of serverURL: String) throws(Invalid) -> InternetLocation {
        for scalar in serverURL.unicodeScalars where !(scalar.isASCII && isRFC3986(UInt8(scalar.value))) {
            throw Invalid("invalid character \(String(scalar).debugDescription) in the server URL")
        }
        // From here on every character is one of RFC 3986's, all ASCII: read as bytes.
        let text = Array(
            (serverURL.contains("://") || serverURL.hasPrefix("//") ? serverURL : "//" + serverURL).utf8)
        try checkEscapes(text)

        // Go's order: the fragment off first, then the scheme, then the query.
        let (beforeFragment, fragment) = split(text[...], atFirst: UInt8(ascii: "#"))
        let (scheme, afterScheme) = try splitScheme(beforeFragment)
        let (beforeQuery, query) = split(afterScheme, atFirst: UInt8(ascii: "?"))
        var rest = beforeQuery
        try check(query ?? [], allowing: isQueryCharacter, in: "the server URL's query")
        try check(fragment ?? [], allowing: isQueryCharacter, in: "the server URL's fragment")

        var host = ""
        var port: Int?
        let slash = UInt8(ascii: "/")
        if rest.first != slash {
            if scheme.isEmpty, rest.prefix(while: { $0 != slash }).contains(UInt8(ascii: ":")) {
                throw Invalid("first path segment in URL cannot contain colon")
            }
            rest = rest[rest.endIndex...]  // Opaque, or a relative path: no host.
        } else if rest.starts(with: [slash, slash]) && (!scheme.isEmpty || !rest.starts(with: [slash, slash, slash])) {
            let authority = rest.dropFirst(2).prefix(while: { $0 != slash })
            rest = rest[authority.endIndex...]
            guard !authority.contains(UInt8(ascii: "@")) else {
                throw Invalid(
                    #"the server URL names a user (user information before "@"), which a registry's URL may not"#)
            }
            (host, port) = try hostAndPort(authority)
        }
        try check(rest, allowing: isPathCharacter, in: "the server URL's path")
        guard let path = String(validating: decoded(rest), as: UTF8.self) else {
            throw Invalid("the server URL's path is not UTF-8 once decoded")
        }

        guard ["", "http", "https"].contains(scheme) else { throw Invalid("unsupported scheme: \(scheme)") }
        guard !host.isEmpty else { throw Invalid("no hostname in URL") }
        return InternetLocation(
            protocolCode: scheme == "http" ? "http" : "htps", server: host, port: port, path: path)
    }

    /// The URL `docker-credential-osxkeychain list` prints for an item: `https://` (`http://` for the http
    /// protocol), the host (an IPv6 address in brackets, a zone's `%` as `%25`), `:port` unless it is 0, and
    /// the path.
    static func string(protocolCode: String?, server: String, port: Int, path: String) -> String {
        let scheme = protocolCode == "htps" ? "https" : "http"
        let host = server.contains(":") ? "[\(server.replacingOccurrences(of: "%", with: "%25"))]" : server
        let encodedPath = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
        return "\(scheme)://\(host)\(port != 0 ? ":\(port)" : "")\(encodedPath)"
    }

    // MARK: The parts

    /// Go's `getScheme`: letters, then letters, digits, `+`, `-` or `.`, up to a colon — lowercased; "" and
    /// everything when the text does not start so.
    private static func splitScheme(_ text: ArraySlice<UInt8>) throws(Invalid) -> (String, ArraySlice<UInt8>) {
        for index in text.indices {
            let byte = text[index]
            if isLetter(byte) { continue }
            if isDigit(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") {
                if index == text.startIndex { break }
                continue
            }
            if byte == UInt8(ascii: ":") {
                guard index != text.startIndex else { throw Invalid("missing protocol scheme") }
                return (String(decoding: text[..<index], as: UTF8.self).lowercased(), text[(index + 1)...])
            }
            break
        }
        return ("", text)
    }

    /// `host[:port]` or `[IPv6 address[%25zone]][:port]`, as Go's `parseHost` splits it: the host without
    /// brackets (a zone after `%`), and the port (nil when there is none, or only the colon).
    private static func hostAndPort(_ authority: ArraySlice<UInt8>) throws(Invalid) -> (String, Int?) {
        let colon = UInt8(ascii: ":")
        let host: ArraySlice<UInt8>
        let colonPort: ArraySlice<UInt8>
        var address = ""
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.lastIndex(of: UInt8(ascii: "]")) else { throw Invalid("missing ']' in host") }
            host = authority[(authority.startIndex + 1)..<close]
            colonPort = authority[(close + 1)...]
            try checkPort(colonPort)
            address = try ipv6(host)
        } else {
            let colonIndex = authority.lastIndex(of: colon) ?? authority.endIndex
            host = authority[..<colonIndex]
            colonPort = authority[colonIndex...]
            try checkPort(colonPort)
            guard !host.contains(UInt8(ascii: "%")) else {
                throw Invalid("the server URL's host may not be percent-encoded")
            }
            for byte in host where !isUnreserved(byte) {
                throw Invalid("invalid character \(String(UnicodeScalar(byte)).debugDescription) in host name")
            }
            address = String(decoding: host, as: UTF8.self)
        }
        let digits = colonPort.dropFirst()
        guard !digits.isEmpty else { return (address, nil) }
        guard digits.count <= 5, let port = Int(String(decoding: digits, as: UTF8.self)), port <= 65535 else {
            throw Invalid("the server URL's port is not a number from 0 to 65535")
        }
        return (address, port)
    }

    /// Go's `validOptionalPort`: nothing, or a colon and digits.
    private static func checkPort(_ colonPort: ArraySlice<UInt8>) throws(Invalid) {
        guard colonPort.isEmpty || (colonPort.first == UInt8(ascii: ":") && colonPort.dropFirst().allSatisfy(isDigit))
        else { throw Invalid("invalid port \(String(decoding: colonPort, as: UTF8.self).debugDescription) after host") }
    }

    /// An IPv6 literal's inside: hexadecimal digits, colons and dots (an IPv4 tail), at least one colon; then
    /// optionally `%25` and a zone of unreserved characters (RFC 6874). The address, the zone after `%`.
    private static func ipv6(_ inside: ArraySlice<UInt8>) throws(Invalid) -> String {
        let invalid = Invalid("the server URL's host is not an IPv6 address in brackets")
        var address = inside
        var zone: ArraySlice<UInt8>?
        if let percent = inside.firstIndex(of: UInt8(ascii: "%")) {
            guard inside[percent...].starts(with: Array("%25".utf8)) else { throw invalid }
            address = inside[..<percent]
            zone = inside[(percent + 3)...]
        }
        guard address.contains(UInt8(ascii: ":")),
            address.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") })
        else { throw invalid }
        if let zone {
            guard !zone.isEmpty, zone.allSatisfy(isUnreserved) else { throw invalid }
            return String(decoding: address, as: UTF8.self) + "%" + String(decoding: zone, as: UTF8.self)
        }
        return String(decoding: address, as: UTF8.self)
    }

    /// Every `%` is followed by two hexadecimal digits; else Go's "invalid URL escape".
    private static func checkEscapes(_ text: [UInt8]) throws(Invalid) {
        for index in text.indices where text[index] == UInt8(ascii: "%") {
            guard index + 2 < text.count, isHexDigit(text[index + 1]), isHexDigit(text[index + 2]) else {
                let shown = String(decoding: text[index..<min(index + 3, text.count)], as: UTF8.self)
                throw Invalid("invalid URL escape \"\(shown)\"")
            }
        }
    }

    /// Refuses the first byte of `part` that `allowed` refuses.
    private static func check(_ part: ArraySlice<UInt8>, allowing allowed: (UInt8) -> Bool, in what: String)
        throws(Invalid)
    {
        for byte in part where !allowed(byte) {
            throw Invalid("invalid character \(String(UnicodeScalar(byte)).debugDescription) in \(what)")
        }
    }

    /// `text` with its escapes (checked) decoded.
    private static func decoded(_ text: ArraySlice<UInt8>) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            if text[index] == UInt8(ascii: "%"), index + 2 < text.endIndex,
                let high = hexValue(text[index + 1]), let low = hexValue(text[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(text[index])
                index += 1
            }
        }
        return bytes
    }

    /// `text` split at the first `separator`: before it, and after it (nil when there is none).
    private static func split(_ text: ArraySlice<UInt8>, atFirst separator: UInt8)
        -> (ArraySlice<UInt8>, ArraySlice<UInt8>?)
    {
        guard let index = text.firstIndex(of: separator) else { return (text, nil) }
        return (text[..<index], text[(index + 1)...])
    }

    // MARK: RFC 3986's characters (§2)

    private static func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
    private static func isHexDigit(_ byte: UInt8) -> Bool { hexValue(byte) != nil }
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }
    /// `unreserved`: letters, digits, `-`, `.`, `_`, `~`.
    private static func isUnreserved(_ byte: UInt8) -> Bool {
        isLetter(byte) || isDigit(byte) || Array("-._~".utf8).contains(byte)
    }
    /// `sub-delims`.
    private static func isSubDelimiter(_ byte: UInt8) -> Bool { Array("!$&'()*+,;=".utf8).contains(byte) }
    /// Any character RFC 3986 has: unreserved, reserved (`gen-delims` and `sub-delims`) and `%`.
    private static func isRFC3986(_ byte: UInt8) -> Bool {
        isUnreserved(byte) || isSubDelimiter(byte) || Array(":/?#[]@%".utf8).contains(byte)
    }
    /// A path's characters: `pchar` (unreserved, escapes, sub-delims, `:`, `@`) and `/`.
    private static func isPathCharacter(_ byte: UInt8) -> Bool {
        isUnreserved(byte) || isSubDelimiter(byte) || Array(":@/%".utf8).contains(byte)
    }
    /// A query's or fragment's characters: a path's and `?`.
    private static func isQueryCharacter(_ byte: UInt8) -> Bool { isPathCharacter(byte) || byte == UInt8(ascii: "?") }
}
