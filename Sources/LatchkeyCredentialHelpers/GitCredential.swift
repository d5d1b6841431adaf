import Foundation
import LatchkeyPOSIX

/// A credential as git's helper protocol describes it (git-credential(1), "INPUT/OUTPUT FORMAT"): one
/// `key=value` line per attribute, ended by a blank line or the end of the input. Keys this helper does not
/// know are ignored, as the protocol asks, so a newer git never breaks it.
struct GitCredential {
    /// `protocol` ("https").
    var `protocol`: String?
    /// `host`, with its port when there is one ("example.com:8088").
    var host: String?
    /// `path` (sent only with `credential.useHttpPath`).
    var path: String?
    /// `username`.
    var username: String?
    /// `password`, as bytes (the protocol allows any but newline and NUL).
    var password: [UInt8]?
    /// `password_expiry_utc`: when the password (an OAuth access token, say) expires, in Unix seconds.
    var passwordExpiry: [UInt8]?
    /// `oauth_refresh_token`, kept as confidential as the password.
    var oauthRefreshToken: [UInt8]?
    /// `capability[]`: what git announced it understands ("state", "authtype").
    var capabilities: [String] = []
    /// `state[]`: opaque values helpers handed git before; this helper reads only its own.
    var states: [String] = []

    /// Why an input is not a credential. The messages name the line, never its content (it may be a
    /// password).
    enum BadInput: Error, Equatable, CustomStringConvertible {
        /// A line without `=`.
        case noEquals(line: Int)
        /// A line holding a NUL byte.
        case nul(line: Int)
        /// A line longer than the protocol's 65,535 bytes.
        case lineTooLong(line: Int)
        /// More input than a credential can be.
        case tooLarge
        /// A value this helper keys items by that is not UTF-8.
        case notText(key: String)
        /// A host whose port is not a number from 0 to 65535.
        case badPort
        /// The input could not be read.
        case unreadable(String)

        var description: String {
            switch self {
            case .noEquals(let line): "bad input: line \(line) has no '='"
            case .nul(let line): "bad input: line \(line) holds a NUL byte"
            case .lineTooLong(let line):
                "bad input: line \(line) is longer than \(GitCredential.maximumLineBytes) bytes, git's limit"
            case .tooLarge: "bad input: more than \(GitCredential.maximumInputBytes >> 20) MiB"
            case .notText(let key): "bad input: the \(key) is not UTF-8 text"
            case .badPort: "bad input: the host's port is not a number from 0 to 65535"
            case .unreadable(let reason): "cannot read standard input: \(reason)"
            }
        }
    }

    /// The longest line the protocol allows, newline included.
    static let maximumLineBytes = 65_535
    /// The most input read before the credential is refused (git sends a few hundred bytes).
    static let maximumInputBytes = 1 << 20

    /// Parses the lines of a credential (without their newlines), in order.
    init(lines: [ArraySlice<UInt8>]) throws(BadInput) {
        for (index, line) in lines.enumerated() {
            let number = index + 1
            guard !line.contains(0) else { throw .nul(line: number) }
            guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else { throw .noEquals(line: number) }
            let key = String(decoding: line[line.startIndex..<equals], as: UTF8.self)
            let value = Array(line[(equals + 1)...])
            switch key {
            case "protocol": self.protocol = try Self.text(value, key)
            case "host": host = try Self.text(value, key)
            case "path": path = try Self.text(value, key)
            case "username": username = try Self.text(value, key)
            case "password": password = value
            case "password_expiry_utc": passwordExpiry = value
            case "oauth_refresh_token": oauthRefreshToken = value
            // An empty value of a multi-valued key clears its list (git-credential(1)).
            case "capability[]":
                if value.isEmpty {
                    capabilities = []
                } else {
                    capabilities.append(String(decoding: value, as: UTF8.self))
                }
            case "state[]":
                if value.isEmpty { states = [] } else { states.append(String(decoding: value, as: UTF8.self)) }
            default: break  // wwwauth[], url, authtype, ephemeral… and keys of future gits: not this helper's.
            }
        }
    }

    private static func text(_ value: [UInt8], _ key: String) throws(BadInput) -> String {
        guard let text = String(validating: value, as: UTF8.self) else { throw .notText(key: key) }
        return text
    }

    /// The host's name and port: "example.com:8088" is ("example.com", 8088), "[::1]:8088" is ("::1", 8088).
    func serverAndPort() throws(BadInput) -> (server: String, port: Int?)? {
        guard let host, !host.isEmpty else { return nil }
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") {
            let server = String(host[host.index(after: host.startIndex)..<close])
            let rest = host[host.index(after: close)...]
            if rest.isEmpty { return (server, nil) }
            guard rest.hasPrefix(":"), let port = InternetLocation.port(rest.dropFirst()) else { throw .badPort }
            return (server, port)
        }
        guard let colon = host.lastIndex(of: ":") else { return (host, nil) }
        guard let port = InternetLocation.port(host[host.index(after: colon)...]) else { throw .badPort }
        return (String(host[..<colon]), port)
    }

    /// The four-character code of each protocol git-credential-osxkeychain keeps; it ignores every other
    /// protocol, and so does this helper, so that an item means the same to both.
    static let protocolCodes: [String: String] = [
        "https": "htps", "http": "http", "ftp": "ftp ", "ftps": "ftps", "imap": "imap", "imaps": "imps", "smtp": "smtp",
    ]

    /// Where the credential is used, as the item's attributes say it; nil when it names no host or a
    /// protocol the helper does not keep.
    func location() throws(BadInput) -> InternetLocation? {
        guard let name = self.protocol, let code = Self.protocolCodes[name], let (server, port) = try serverAndPort()
        else {
            return nil
        }
        return InternetLocation(protocolCode: code, server: server, port: port, path: path)
    }
}

/// Reads a credential from standard input: lines up to the first blank one (or the end of the input), each
/// at most `GitCredential.maximumLineBytes`, in all at most `GitCredential.maximumInputBytes`. It stops at
/// the blank line, so a caller that keeps its end open while it waits for the answer is answered.
struct GitCredentialReader: Sendable {
    /// Reads more input: empty at its end.
    let readMore: @Sendable () throws(GitCredential.BadInput) -> [UInt8]

    /// The lines before the blank line; the bytes read are wiped when the credential is parsed.
    func read() throws(GitCredential.BadInput) -> GitCredential {
        var buffer: [UInt8] = []
        defer { buffer.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        var lines: [Range<Int>] = []
        var lineStart = 0
        var scanned = 0
        reading: while true {
            var chunk = try readMore()
            defer { chunk.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
            if chunk.isEmpty {
                if lineStart < buffer.count { lines.append(lineStart..<buffer.count) }
                break
            }
            guard buffer.count + chunk.count <= GitCredential.maximumInputBytes else { throw .tooLarge }
            buffer.append(contentsOf: chunk)
            while let newline = buffer[scanned...].firstIndex(of: UInt8(ascii: "\n")) {
                guard newline + 1 - lineStart <= GitCredential.maximumLineBytes else {
                    throw .lineTooLong(line: lines.count + 1)
                }
                if newline == lineStart { break reading }  // the blank line
                lines.append(lineStart..<newline)
                lineStart = newline + 1
                scanned = lineStart
            }
            scanned = buffer.count
            guard buffer.count - lineStart < GitCredential.maximumLineBytes else {
                throw .lineTooLong(line: lines.count + 1)
            }
        }
        return try GitCredential(lines: lines.map { buffer[$0] })
    }

    /// Standard input, 64 KiB at a time.
    static let standardInput = GitCredentialReader {
        () throws(GitCredential.BadInput) -> [UInt8] in
        do {
            return try FileDescriptor.standardInput.readSome(maximum: 64 << 10)
        } catch {
            throw .unreadable("\(error)")
        }
    }
}
