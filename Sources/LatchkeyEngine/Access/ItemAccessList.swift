public import FoundationEssentials

/// One item's access list as `KeychainRequest.accessLists` reports it: which item (its persistent reference,
/// its class and the names the user knows it by — never its secret) and the programs the list names.
public struct ItemAccessList: Sendable, Hashable {
    /// The item's persistent reference (`latchkey access` and `latchkey log` print it in hex).
    public let reference: Data
    /// The item's class.
    public let itemClass: ItemClass
    /// Its label, service or server, and account, as `label=… service=… account=…` (attributes only, never
    /// the secret); nil when its class key is not available now.
    public let summary: String?
    /// The programs, oldest entry first.
    public let entries: [AccessListEntry]

    /// A list.
    public init(reference: Data, itemClass: ItemClass, summary: String?, entries: [AccessListEntry]) {
        self.reference = reference
        self.itemClass = itemClass
        self.summary = summary
        self.entries = entries
    }

    /// The names an item's attributes give it: label, service or server, account (never the secret); nil
    /// when it has none of them.
    package static func summary(of attributes: [AttributeKey: AttributeValue]) -> String? {
        var parts: [String] = []
        for (key, name) in [
            (AttributeKey.label, "label"), (.service, "service"), (.server, "server"), (.account, "account"),
        ] {
            if let value = attributes[key]?.stringValue, !value.isEmpty { parts.append("\(name)=\(value)") }
        }
        return parts.isEmpty ? nil : parts.joined(separator: " ")
    }
}
