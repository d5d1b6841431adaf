package import FoundationEssentials
package import LatchkeyEngine

/// Keychain items as a keyring file's items, for `export --to gnome-keyring`: a Secret Service item as it
/// was (label, attributes, secret); an internet password under GNOME Keyring's network-password schema
/// (`user`, `server`, `protocol`, `port`, `object`, `domain`, `authtype`); a generic password under the generic
/// schema with `service` and `account`; their free-form attributes by name, and the attributes a keyring has
/// no place for as `latchkey:<attribute>` (the comment as `latchkey:icmt`).
package enum KeyringItemMapping {
    /// Whether an item is one of the Secret Service's (its service `org.freedesktop.secrets` or a collection's).
    package static func isSecretServiceItem(_ itemClass: ItemClass, _ attributes: [AttributeKey: AttributeValue])
        -> Bool
    {
        guard itemClass == .genericPassword, let service = attributes[.service]?.stringValue else { return false }
        return service == SecretServiceMapping.service || service.hasPrefix(SecretServiceMapping.service + "/")
    }

    package static func item(_ itemClass: ItemClass, _ attributes: [AttributeKey: AttributeValue], data: Data)
        -> KeyringFile.Item
    {
        var fields: [String: String] = [:]
        for (key, value) in attributes where AttributeKey.isSecretServiceAttribute(key) {
            if let text = value.stringValue, !text.isEmpty {
                fields[String(key.rawValue.dropFirst(AttributeKey.secretServicePrefix.count))] = text
            }
        }
        let created = attributes[.creationDate]?.dateValue ?? Date(timeIntervalSince1970: 0)
        let modified = attributes[.modificationDate]?.dateValue ?? created
        var label = attributes[.label]?.stringValue ?? ""
        if isSecretServiceItem(itemClass, attributes) {
            return KeyringFile.Item(
                label: label, secret: data, attributes: fields, created: created, modified: modified)
        }
        func text(_ key: AttributeKey) -> String? {
            attributes[key].flatMap(EntryMapping.text).flatMap { $0.isEmpty ? nil : $0 }
        }
        var placed: Set<AttributeKey> = [.label, .account]
        if itemClass == .internetPassword {
            fields["xdg:schema"] = "org.gnome.keyring.NetworkPassword"
            fields["user"] = text(.account) ?? ""
            fields["server"] = text(.server) ?? ""
            if let code = text(.protocol) { fields["protocol"] = InternetAddress.schemes[code] ?? code }
            if let port = attributes[.port]?.numberValue, port != 0 { fields["port"] = String(port) }
            if let path = text(.path) { fields["object"] = path }
            if let domain = text(.securityDomain) { fields["domain"] = domain }
            if let type = text(.authenticationType) { fields["authtype"] = type }
            placed.formUnion([.server, .protocol, .port, .path, .securityDomain, .authenticationType])
            if label.isEmpty { label = (text(.account).map { $0 + "@" } ?? "") + (text(.server) ?? "") }
        } else {
            fields["xdg:schema"] = "org.freedesktop.Secret.Generic"
            fields["service"] = text(.service) ?? ""
            fields["account"] = text(.account) ?? ""
            placed.insert(.service)
            if label.isEmpty { label = text(.service) ?? "" }
        }
        for key in EntryMapping.carriedAttributes(of: itemClass).union([.comment]).subtracting(placed) {
            guard let value = text(key) else { continue }
            fields[EntryMapping.attributeFieldPrefix + key.rawValue] = value
        }
        return KeyringFile.Item(label: label, secret: data, attributes: fields, created: created, modified: modified)
    }
}
