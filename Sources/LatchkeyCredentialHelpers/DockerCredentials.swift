import Foundation

/// The JSON docker-credential-helpers exchange: `{"ServerURL": …, "Username": …, "Secret": …}`. Read as
/// Go's decoder reads it into the helpers' struct (names in any case, `null` as empty) except that a key it
/// does not know is refused rather than dropped; written as Go's encoder writes it (that key order, `<`, `>`
/// and `&` escaped), so the output is byte for byte what Docker's own helpers print.
struct DockerCredentials: Equatable {
    /// The registry's URL.
    var serverURL: String
    /// The user name; `<token>` for an identity token.
    var username: String
    /// The password or token.
    var secret: String

    /// Why a store request is not credentials. The messages never hold a value.
    struct Invalid: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    /// Docker's message for a request without a server URL (its client recognises it).
    static let missingServerURL = "no credentials server URL"
    /// Docker's message for credentials without a user name.
    static let missingUsername = "no credentials username"

    private static let fields = ["ServerURL", "Username", "Secret"]

    /// Decodes `store`'s input.
    init(json: [UInt8]) throws(Invalid) {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(json), options: [])
        } catch {
            throw Invalid(description: "the input is not JSON")
        }
        guard let dictionary = object as? [String: Any] else {
            throw Invalid(description: "the input is not a JSON object with ServerURL, Username and Secret")
        }
        var values: [String: String] = [:]
        for (key, value) in dictionary {
            guard let field = Self.fields.first(where: { $0.lowercased() == key.lowercased() }) else {
                throw Invalid(
                    description: "unknown key \(Self.quoted(key)) (the keys are ServerURL, Username and Secret)")
            }
            if value is NSNull { continue }
            guard let text = value as? String else { throw Invalid(description: "\(field) is not a string") }
            values[field] = text
        }
        serverURL = values["ServerURL"] ?? ""
        username = values["Username"] ?? ""
        secret = values["Secret"] ?? ""
        guard !serverURL.isEmpty else { throw Invalid(description: Self.missingServerURL) }
        guard !username.isEmpty else { throw Invalid(description: Self.missingUsername) }
    }

    /// Credentials as `get` answers them.
    init(serverURL: String, username: String, secret: String) {
        self.serverURL = serverURL
        self.username = username
        self.secret = secret
    }

    /// `get`'s output: the object and a newline.
    var json: String {
        "{\"ServerURL\":\(Self.quoted(serverURL)),\"Username\":\(Self.quoted(username)),\"Secret\":\(Self.quoted(secret))}\n"
    }

    /// `list`'s output: server URLs to user names, keys sorted (as Go writes a map), and a newline.
    static func json(list: [String: String]) -> String {
        let pairs = list.sorted { Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }.map { entry in
            "\(quoted(entry.key)):\(quoted(entry.value))"
        }
        return "{" + pairs.joined(separator: ",") + "}\n"
    }

    /// A JSON string as Go's `encoding/json` writes one (HTML-safe).
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "<", ">", "&", "\u{2028}", "\u{2029}": out += escaped(scalar)
            default:
                if scalar.value < 0x20 { out += escaped(scalar) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }

    /// `\u` and four lowercase hexadecimal digits.
    private static func escaped(_ scalar: Unicode.Scalar) -> String {
        let digits = String(scalar.value, radix: 16)
        return "\\u" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
