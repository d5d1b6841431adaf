package import FoundationEssentials
package import LatchkeyEngine

/// Password managers' entries as keychain items and back — the one mapping the KDBX, `pass` and CSV imports
/// and the KDBX export share:
///
/// | entry | item |
/// |---|---|
/// | a URL naming a host (`https://example.com:8443/login`, or a bare `example.com`) | an internet password: `srvr`, `ptcl` (Apple's code for the scheme), `port`, `path` (path, query and fragment) |
/// | no such URL | a generic password, `svce` its label path |
/// | groups and title | `labl`, as a path: "Internet/Mail/Work" |
/// | user name | `acct` |
/// | password | the item's data |
/// | notes | `icmt` |
/// | a URL the attributes do not give back as written (another scheme, odd spelling) | `ss.URL` too |
/// | an HTTP realm (Firefox) | `sdmn`, with `atyp` HTTP Basic |
/// | a custom field | `ss.<name>`, as the Secret Service import keeps free-form attributes; `latchkey:<attribute>`, as the export writes an attribute KeePass has no place for, is that attribute again |
/// | created, modified | `cdat`, `mdat` |
package enum EntryMapping {
    /// The custom-field prefix of item attributes KeePass has no place for (`latchkey:svce`).
    package static let attributeFieldPrefix = "latchkey:"
    /// The KDBX attachment that holds a secret that is not text (KDBX's password field holds text only).
    package static let binarySecretAttachment = "latchkey-secret.bin"

    /// The attributes an exported field may carry back: those the mapping does not set from the entry itself.
    static func carriedAttributes(of itemClass: ItemClass) -> Set<AttributeKey> {
        SchemaCatalog.attributes(of: itemClass).subtracting([
            .accessible, .accessGroup, .synchronizable, .creationDate, .modificationDate, .accessControl, .label,
            .account, .comment, .server, .protocol, .port, .path, .tokenID,
        ])
    }

    /// The item for `entry`, in `group`.
    package static func item(for entry: PasswordEntry, group: String) -> KeychainBackup.Item {
        let address = InternetAddress.parse(entry.url)
        let itemClass: ItemClass = address == nil ? .genericPassword : .internetPassword
        var label = entry.labelPath
        if entry.title.isEmpty, let address { label = (entry.groups + [address.host]).joined(separator: "/") }
        var attributes: [AttributeKey: AttributeValue] = [
            .accessGroup: .string(group), .label: .string(label), .account: .string(entry.username),
        ]
        if !entry.notes.isEmpty { attributes[.comment] = .string(entry.notes) }
        if let address {
            attributes[.server] = .string(address.host)
            if let code = address.protocolCode { attributes[.protocol] = .string(code) }
            if let port = address.port { attributes[.port] = .number(Int64(port)) }
            if !address.path.isEmpty { attributes[.path] = .string(address.path) }
            if !entry.realm.isEmpty {
                attributes[.securityDomain] = .string(entry.realm)
                attributes[.authenticationType] = .string("http")
            }
            if url(of: itemClass, attributes) != entry.url {
                attributes[AttributeKey.secretService("URL")] = .string(entry.url)
            }
        } else {
            attributes[.service] = .string(label)
            if !entry.url.isEmpty { attributes[AttributeKey.secretService("URL")] = .string(entry.url) }
        }
        let carried = carriedAttributes(of: itemClass)
        for field in entry.fields {
            if field.name.hasPrefix(attributeFieldPrefix) {
                let key = AttributeKey(rawValue: String(field.name.dropFirst(attributeFieldPrefix.count)))
                if carried.contains(key) {
                    attributes[key] = .string(field.value)
                    continue
                }
            }
            attributes[AttributeKey.secretService(field.name)] = .string(field.value)
        }
        if let created = entry.created { attributes[.creationDate] = .date(created) }
        if let modified = entry.modified ?? entry.created { attributes[.modificationDate] = .date(modified) }
        return KeychainBackup.Item(itemClass: itemClass, attributes: attributes, data: entry.password)
    }

    /// The URL an item's attributes say: `ss.URL` when it has one, else its server, protocol, port and path
    /// as a URL (internet passwords), else "".
    package static func url(of itemClass: ItemClass, _ attributes: [AttributeKey: AttributeValue]) -> String {
        if let url = attributes[AttributeKey.secretService("URL")]?.stringValue { return url }
        guard itemClass == .internetPassword, let server = attributes[.server]?.stringValue, !server.isEmpty else {
            return ""
        }
        let code = attributes[.protocol]?.stringValue ?? ""
        let port = attributes[.port]?.numberValue.flatMap { $0 == 0 ? nil : Int($0) }
        return InternetAddress(
            scheme: InternetAddress.schemes[code], host: server, port: port,
            path: attributes[.path]?.stringValue ?? ""
        ).text
    }

    /// The entry an item becomes in a password manager's file: its label split into groups and title at
    /// "/" (when every part is non-empty and the label is no URL), its account, secret, URL and comment, its
    /// free-form attributes as custom fields, and the attributes such a file has no place for as
    /// `latchkey:<attribute>` fields.
    package static func entry(for itemClass: ItemClass, _ attributes: [AttributeKey: AttributeValue], data: Data)
        -> PasswordEntry
    {
        let label = attributes[.label]?.stringValue ?? ""
        var groups: [String] = []
        var title = label
        let parts = label.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        if parts.count > 1, !label.contains("://"), parts.allSatisfy({ !$0.isEmpty }) {
            groups = Array(parts.dropLast())
            title = parts.last!
        }
        if title.isEmpty {
            title = attributes[itemClass == .internetPassword ? .server : .service]?.stringValue ?? ""
        }
        var entry = PasswordEntry(
            title: title, groups: groups, username: attributes[.account]?.stringValue ?? "", password: data,
            url: url(of: itemClass, attributes), notes: attributes[.comment]?.stringValue ?? "",
            realm: attributes[.securityDomain]?.stringValue ?? "", created: attributes[.creationDate]?.dateValue,
            modified: attributes[.modificationDate]?.dateValue)
        let carried = carriedAttributes(of: itemClass)
        for (key, value) in attributes.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            if AttributeKey.isSecretServiceAttribute(key) {
                let name = String(key.rawValue.dropFirst(AttributeKey.secretServicePrefix.count))
                if name != "URL", let text = value.stringValue {
                    entry.fields.append(PasswordEntry.Field(name: name, value: text))
                }
                continue
            }
            guard carried.contains(key), let text = Self.text(value) else { continue }
            // The service a generic password got from its label, and the Secret Service's content type, say nothing.
            if key == .service && text == label { continue }
            if key == .itemDescription && text == "text/plain" { continue }
            if key == .authenticationType && text == "http" && !entry.realm.isEmpty { continue }
            entry.fields.append(PasswordEntry.Field(name: attributeFieldPrefix + key.rawValue, value: text))
        }
        return entry
    }

    /// An attribute's value as a field's text: strings, and numbers in decimal.
    static func text(_ value: AttributeValue) -> String? {
        switch value {
        case .string(let text): text
        case .number(let number): String(number)
        case .bool(let flag): flag ? "1" : "0"
        case .data(let bytes): String(validating: bytes, as: UTF8.self)
        case .date: nil
        }
    }
}
