public import Foundation

/// Which items a query sees by their synchronizable flag (SEMANTICS.md §2): a query that says nothing
/// sees only items that do not sync.
public enum SynchronizableFilter: Hashable, Sendable {
    /// Only items that do not sync (the default, also when `kSecAttrSynchronizable` is absent).
    case no
    /// Only synchronizable items.
    case yes
    /// Both (`kSecAttrSynchronizableAny`).
    case any
}

/// How many items a search returns (`kSecMatchLimit`).
public enum MatchLimit: Hashable, Sendable {
    /// The first match (`kSecMatchLimitOne`, the default).
    case one
    /// Every match (`kSecMatchLimitAll`).
    case all
    /// At most this many (a positive number).
    case count(Int)

    /// The number of items at most, nil for all.
    var maximum: Int? {
        switch self {
        case .one: 1
        case .all: nil
        case .count(let n): n
        }
    }
}

/// What a search or an add returns (`kSecReturnData`, `kSecReturnAttributes`, `kSecReturnPersistentRef`).
public struct ReturnOptions: OptionSet, Hashable, Sendable {
    public let rawValue: Int
    /// Creates a set from raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The secret (`kSecReturnData`).
    public static let data = ReturnOptions(rawValue: 1 << 0)
    /// The attributes (`kSecReturnAttributes`).
    public static let attributes = ReturnOptions(rawValue: 1 << 1)
    /// A persistent reference (`kSecReturnPersistentRef`).
    public static let persistentReference = ReturnOptions(rawValue: 1 << 2)
    /// A reference (`kSecReturnRef`). For passwords Apple returns a dictionary with the class, the
    /// attributes and the data; certificate and key references arrive with certificate support.
    public static let reference = ReturnOptions(rawValue: 1 << 3)
}

/// An item to add: its class, its attributes (including, optionally, `agrp`, `pdmn` and `sync`), and its
/// secret.
///
/// ```swift
/// let item = NewItem(.genericPassword,
///                    attributes: [.service: .string("mail"), .account: .string("alice")],
///                    data: Data("hunter2".utf8))
/// ```
public struct NewItem: Sendable, CustomStringConvertible {
    /// The item class.
    public var itemClass: ItemClass
    /// The attributes, keyed by Apple's short names.
    public var attributes: [AttributeKey: AttributeValue]
    /// The secret (`kSecValueData`), if any.
    public var data: Data?

    /// Creates an item description.
    public init(_ itemClass: ItemClass, attributes: [AttributeKey: AttributeValue] = [:], data: Data? = nil) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.data = data
    }

    /// The class and attribute names only; never values or the secret.
    public var description: String {
        "NewItem(\(itemClass.rawValue), attributes: \(attributes.keys.sorted()), data: \(data.map { "\($0.count) bytes" } ?? "none"))"
    }
}

/// A search: which items (class, attribute values, flags) and what to return.
///
/// Attribute values match exactly. `agrp` narrows the search to one of the caller's groups, `pdmn` to one
/// accessibility class; `sync` is expressed by `synchronizable`.
public struct ItemQuery: Sendable, CustomStringConvertible {
    /// The item class.
    public var itemClass: ItemClass
    /// Attribute values every match must have (exact equality).
    public var matching: [AttributeKey: AttributeValue]
    /// Which items by their synchronizable flag.
    public var synchronizable: SynchronizableFilter
    /// A persistent reference (`kSecValuePersistentRef`) naming one item.
    public var persistentReference: Data?
    /// How many items to return.
    public var limit: MatchLimit
    /// What to return for each item.
    public var returning: ReturnOptions
    /// What to do when a match's secret needs the user's confirmation (`kSecUseAuthenticationUI`).
    public var authenticationUI: AuthenticationUI
    /// Why the application asks, shown to the user (`kSecUseOperationPrompt`).
    public var operationPrompt: String?

    /// Creates a query.
    public init(
        _ itemClass: ItemClass, matching: [AttributeKey: AttributeValue] = [:],
        synchronizable: SynchronizableFilter = .no, persistentReference: Data? = nil,
        limit: MatchLimit = .one, returning: ReturnOptions = [], authenticationUI: AuthenticationUI = .allow,
        operationPrompt: String? = nil
    ) {
        self.itemClass = itemClass
        self.matching = matching
        self.synchronizable = synchronizable
        self.persistentReference = persistentReference
        self.limit = limit
        self.returning = returning
        self.authenticationUI = authenticationUI
        self.operationPrompt = operationPrompt
    }

    /// The class and attribute names only; never values.
    public var description: String {
        "ItemQuery(\(itemClass.rawValue), matching: \(matching.keys.sorted()), sync: \(synchronizable), limit: \(limit))"
    }
}

/// Changes for `update`: new attribute values and, optionally, a new secret.
public struct ItemChanges: Sendable, CustomStringConvertible {
    /// New attribute values (including `agrp`, `pdmn` or `sync` to move an item).
    public var attributes: [AttributeKey: AttributeValue]
    /// A new secret, or nil to keep the current one.
    public var data: Data?

    /// Creates a change set.
    public init(attributes: [AttributeKey: AttributeValue] = [:], data: Data? = nil) {
        self.attributes = attributes
        self.data = data
    }

    /// Attribute names only; never values or the secret.
    public var description: String {
        "ItemChanges(attributes: \(attributes.keys.sorted()), data: \(data.map { "\($0.count) bytes" } ?? "unchanged"))"
    }
}

/// One item found (or added): its attributes (with `agrp`, `pdmn`, `sync`, `cdat`, `mdat`), its secret when
/// asked for, and its persistent reference.
public struct ItemResult: Sendable, Hashable, CustomStringConvertible {
    /// The item class.
    public let itemClass: ItemClass
    /// Every stored attribute (present when attributes were asked for; also used internally).
    public let attributes: [AttributeKey: AttributeValue]
    /// The secret, when `.data` was asked for.
    public let data: Data?
    /// A reference that names this item across processes and restarts (`kSecValuePersistentRef`).
    public let persistentReference: Data

    /// Creates a result (for test doubles and adapters).
    public init(
        itemClass: ItemClass, attributes: [AttributeKey: AttributeValue], data: Data?, persistentReference: Data
    ) {
        self.itemClass = itemClass
        self.attributes = attributes
        self.data = data
        self.persistentReference = persistentReference
    }

    /// The value of one attribute.
    public subscript(key: AttributeKey) -> AttributeValue? { attributes[key] }

    /// Attribute names only; the secret is always redacted.
    public var description: String {
        "ItemResult(\(itemClass.rawValue), attributes: \(attributes.keys.sorted()), data: \(data == nil ? "none" : "redacted"))"
    }
}
