public import FoundationEssentials
public import LatchkeyPKI

/// Which items a query sees by their synchronizable flag (docs/SEMANTICS.md §2): a query that says nothing
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
    package var maximum: Int? {
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
    /// attributes and the data; for certificates, the certificate (`Certificate`, a `SecCertificate` in
    /// LatchkeySecurity). Key references arrive with keys.
    public static let reference = ReturnOptions(rawValue: 1 << 3)
}

/// The certificate filters of a search (`kSecMatchIssuers`, `kSecMatchValidOnDate`,
/// `kSecMatchSubjectContains`, macOS's `kSecMatchSubjectStartsWith`/`EndsWith`/`WholeString`,
/// `kSecMatchEmailAddressIfPresent`, `kSecMatchTrustedOnly`, `kSecMatchPolicy`): each looks inside the
/// certificate, so
/// the search decrypts and decodes every candidate. They apply to certificate searches only.
public struct CertificateMatch: Sendable, Hashable {
    /// Normalized issuer names (Name contents, as `kSecAttrIssuer` holds them): a certificate matches when
    /// its issuer is one of them, or when a certificate in the keychain that issued it (up to ten links up
    /// the chain) was issued by one of them. Empty: no issuer filter.
    public var issuers: [Data]
    /// Only certificates valid on this date.
    public var validOn: Date?
    /// Only certificates with a subject attribute containing this text.
    public var subjectContains: String?
    /// Only certificates whose common name starts with this text (`kSecMatchSubjectStartsWith`; as macOS's
    /// file-based keychain, the name `SecCertificateCopyCommonName` gives; a certificate without one matches
    /// no subject filter of the three).
    public var subjectStartsWith: String?
    /// Only certificates whose common name ends with this text (`kSecMatchSubjectEndsWith`).
    public var subjectEndsWith: String?
    /// Only certificates whose common name is this text (`kSecMatchSubjectWholeString`).
    public var subjectWholeString: String?
    /// Whether the subject filters ignore diacritics, "é" matching "e" (`kSecMatchDiacriticInsensitive`).
    public var diacriticInsensitive: Bool
    /// Whether the subject filters ignore width, full-width "Ａ" matching "A" (`kSecMatchWidthInsensitive`).
    public var widthInsensitive: Bool
    /// Only certificates with this e-mail address (compared without case), or with none.
    public var emailAddressIfPresent: String?
    /// Whether the subject filters ignore case (`kSecMatchCaseInsensitive`).
    public var caseInsensitive: Bool
    /// Only certificates the system's CA store trusts under the basic X.509 policy (`kSecMatchTrustedOnly`).
    public var trustedOnly: Bool
    /// Only certificates that satisfy this policy (`kSecMatchPolicy`), as Apple's `_FilterWithPolicy`
    /// checks: the basic X.509 policy builds the chain to a trusted anchor; another (SSL) checks the
    /// certificate alone — its host name, purpose and dates — without a chain. At `validOn` when given.
    public var policy: TrustPolicy?

    /// Creates a filter; with no arguments it admits every certificate.
    public init(
        issuers: [Data] = [], validOn: Date? = nil, subjectContains: String? = nil,
        emailAddressIfPresent: String? = nil, caseInsensitive: Bool = false, trustedOnly: Bool = false,
        policy: TrustPolicy? = nil,
        subjectStartsWith: String? = nil, subjectEndsWith: String? = nil, subjectWholeString: String? = nil,
        diacriticInsensitive: Bool = false, widthInsensitive: Bool = false
    ) {
        self.subjectStartsWith = subjectStartsWith
        self.subjectEndsWith = subjectEndsWith
        self.subjectWholeString = subjectWholeString
        self.diacriticInsensitive = diacriticInsensitive
        self.widthInsensitive = widthInsensitive
        self.policy = policy
        self.trustedOnly = trustedOnly
        self.issuers = issuers
        self.validOn = validOn
        self.subjectContains = subjectContains
        self.emailAddressIfPresent = emailAddressIfPresent
        self.caseInsensitive = caseInsensitive
    }

    /// Whether the filter admits every certificate.
    public var isEmpty: Bool { self == CertificateMatch() }
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
    /// Whether this is a held key made by `createHeldKey` (the only adds that may carry `tkid` and a held
    /// key's stored form). Never sent over the agent protocol.
    package var isHeldKey = false

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
    /// Filters that look inside certificates (searches of certificates only).
    public var certificateMatch: CertificateMatch
    /// `kSecMatchHostOrSubdomainOfHost` (searches of internet passwords only): items whose server is this
    /// host or a subdomain of it, compared without regard to case.
    public var hostOrSubdomainOf: String?

    /// Creates a query.
    public init(
        _ itemClass: ItemClass, matching: [AttributeKey: AttributeValue] = [:],
        synchronizable: SynchronizableFilter = .no, persistentReference: Data? = nil,
        limit: MatchLimit = .one, returning: ReturnOptions = [], authenticationUI: AuthenticationUI = .allow,
        operationPrompt: String? = nil, certificateMatch: CertificateMatch = CertificateMatch()
    ) {
        self.certificateMatch = certificateMatch
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
