package import FoundationEssentials
import LatchkeyCrypto
package import LatchkeyEngine

/// Secret Service items as Latchkey's own provider stores them in its `login` collection — the mapping
/// `import --from-secret-service` and the keyring-file import share: group and service
/// `org.freedesktop.secrets`, a random account (32 hex digits), the label, each attribute as `ss.<name>`, the
/// content type in `desc`, the secret as the data.
package enum SecretServiceMapping {
    package static let group = "org.freedesktop.secrets"
    package static let service = "org.freedesktop.secrets"

    /// The attributes of a new item (without dates).
    package static func attributes(label: String, attributes: [String: String], contentType: String)
        -> [AttributeKey: AttributeValue]
    {
        var result: [AttributeKey: AttributeValue] = [
            .service: .string(service), .accessGroup: .string(group),
            .account: .string(Hex.encode(SecureRandom.bytes(16))),
            .label: .string(label), .itemDescription: .string(contentType),
        ]
        for (key, value) in attributes { result[AttributeKey.secretService(key)] = .string(value) }
        return result
    }

    /// An item to import, with its dates.
    package static func item(
        label: String, attributes: [String: String], secret: Data, contentType: String = "text/plain",
        created: Date? = nil, modified: Date? = nil
    ) -> KeychainBackup.Item {
        var fields = self.attributes(label: label, attributes: attributes, contentType: contentType)
        if let created { fields[.creationDate] = .date(created) }
        if let modified = modified ?? created { fields[.modificationDate] = .date(modified) }
        return KeychainBackup.Item(itemClass: .genericPassword, attributes: fields, data: secret)
    }
}
