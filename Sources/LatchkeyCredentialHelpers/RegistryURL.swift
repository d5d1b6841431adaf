import Foundation

/// A registry's server URL split as docker-credential-osxkeychain splits it (its `registryurl.Parse` and
/// `splitServer`): a URL without a scheme is read as `//host…`; the scheme must be http, https or none
/// (https); the host is required; the query is dropped; the path is kept as it is ("" when there is none).
enum RegistryURL {
    /// Why a server URL cannot name a registry.
    struct Invalid: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    /// The location of the items for `serverURL`.
    static func location(of serverURL: String) throws(Invalid) -> InternetLocation {
        let text = serverURL.contains("://") || serverURL.hasPrefix("//") ? serverURL : "//" + serverURL
        guard let components = URLComponents(string: text) else {
            throw Invalid(description: "the server URL is not a URL")
        }
        let scheme = components.scheme?.lowercased() ?? ""
        guard ["", "http", "https"].contains(scheme) else {
            throw Invalid(description: "unsupported scheme: \(scheme)")
        }
        var host = components.host ?? ""
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw Invalid(description: "no hostname in URL") }
        if let port = components.port, !(0...65535).contains(port) {
            throw Invalid(description: "the server URL's port is not a number from 0 to 65535")
        }
        return InternetLocation(
            protocolCode: scheme == "http" ? "http" : "htps", server: host, port: components.port,
            path: components.path)
    }

    /// The URL `docker-credential-osxkeychain list` prints for an item: `https://` (`http://` for the http
    /// protocol), the host (an IPv6 address in brackets), `:port` unless it is 0, and the path.
    static func string(protocolCode: String?, server: String, port: Int, path: String) -> String {
        let scheme = protocolCode == "htps" ? "https" : "http"
        let host = server.contains(":") ? "[\(server)]" : server
        let encodedPath = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
        return "\(scheme)://\(host)\(port != 0 ? ":\(port)" : "")\(encodedPath)"
    }
}
