import Foundation
import Latchkey

/// Where an internet password is used — the attributes macOS's git and docker helpers key their items by:
/// `kSecAttrProtocol`, `kSecAttrServer`, `kSecAttrPort`, `kSecAttrPath`, with the authentication type
/// `kSecAttrAuthenticationTypeDefault`. An item made by either helper here holds exactly these, so it means
/// on Linux what it means on a Mac.
struct InternetLocation: Equatable {
    /// The four-character protocol code ("htps", "http", …).
    var protocolCode: String
    /// The host name, without a port (and an IPv6 address without its brackets).
    var server: String
    /// The port; nil when the URL names none (the item then has port 0, the attribute's default).
    var port: Int?
    /// The path; nil to match any path (git without `credential.useHttpPath`), "" for none.
    var path: String?

    /// The authentication type both helpers write (`kSecAttrAuthenticationTypeDefault`).
    static let authenticationType = AuthenticationType.default.rawValue

    /// The attributes an item made for this location carries, and a search for it matches: port and
    /// path exactly (0 and "" when there are none), except a path of nil, which is left out.
    var attributes: [AttributeKey: AttributeValue] {
        var attributes: [AttributeKey: AttributeValue] = [
            .protocol: .string(protocolCode), .server: .string(server), .port: .number(Int64(port ?? 0)),
            .authenticationType: .string(Self.authenticationType),
        ]
        if let path { attributes[.path] = .string(path) }
        return attributes
    }

    /// The port of `text`, a decimal number of 0 to 65535 (nil for anything else).
    static func port(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 5, text.allSatisfy({ $0.isASCII && $0.isNumber }), let port = Int(text),
            port <= 65535
        else { return nil }
        return port
    }
}

extension AttributeValue {
    /// The value as text: a string, or a four-character code stored as a number.
    var text: String? {
        switch self {
        case .string(let value): return value
        case .data(let value): return String(bytes: value, encoding: .utf8)
        case .number(let value):
            let bytes = (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * (3 - $0))) }
            return String(bytes: bytes, encoding: .ascii)
        default: return nil
        }
    }
}
