import FoundationEssentials

/// How an attribute stores what callers give it, after Apple's converters (`SecDbItem.c`):
enum SchemaKind: Sendable {
    /// Text or bytes, kept as given; text and bytes with the same UTF-8 match ("Blob" in Apple's schema).
    case blob
    /// Bytes; text becomes its UTF-8 bytes, a number its 4 bytes ("Data").
    case data
    /// An integer; a boolean becomes 0/1, an integer literal in text becomes the number, any other text is
    /// kept as text (so `kSecAttrProtocolHTTPS`, "htps", stays text) ("Number").
    case number
    /// A date ("Date").
    case date
    /// Text; UTF-8 bytes become text ("String": the access group).
    case string
    /// One of the accessibility codes ("Access": `pdmn`).
    case accessibility
}

/// The attributes of each item class, their kinds, and the class's primary key (docs/SEMANTICS.md §1).
///
/// Besides the attributes listed here, every class has the bookkeeping attributes the engine manages
/// itself: `pdmn`, `agrp`, `sync`, `cdat` and `mdat`.
struct ItemSchema: Sendable {
    let itemClass: ItemClass
    /// Every attribute a caller may set or match, with its kind.
    let kinds: [AttributeKey: SchemaKind]
    /// The class-specific primary-key attributes, in Apple's order. `agrp` and `sync` complete the key.
    let primaryKey: [AttributeKey]

    /// The value a missing primary-key attribute takes ('' for text, empty data, 0, false, the 2001
    /// reference date).
    func defaultValue(for key: AttributeKey) -> AttributeValue {
        switch kinds[key] ?? .blob {
        case .blob, .string, .accessibility: .string("")
        case .data: .data(Data())
        case .number: .number(0)
        case .date: .date(Date(timeIntervalSinceReferenceDate: 0))
        }
    }

    /// The schema of a stored class; nil for `identity`.
    static func of(_ itemClass: ItemClass) -> ItemSchema? {
        switch itemClass {
        case .genericPassword: genericPassword
        case .internetPassword: internetPassword
        case .certificate: certificate
        case .key: key
        case .identity: nil
        }
    }

    /// Attributes every class shares; the engine fills or validates them itself.
    static let bookkeeping: [AttributeKey: SchemaKind] = [
        .accessible: .accessibility, .accessGroup: .string, .synchronizable: .number,
        .creationDate: .date, .modificationDate: .date, .accessControl: .data,
    ]

    private static let passwordCommon: [AttributeKey: SchemaKind] = [
        .itemDescription: .blob, .comment: .blob, .creator: .number, .type: .number, "scrp": .number,
        .label: .blob, .alias: .blob, .isInvisible: .number, .isNegative: .number, "cusi": .number,
        .account: .blob,
    ]

    private static func merged(_ parts: [AttributeKey: SchemaKind]...) -> [AttributeKey: SchemaKind] {
        parts.reduce(into: [:]) { result, part in result.merge(part) { first, _ in first } }
    }

    static let genericPassword = ItemSchema(
        itemClass: .genericPassword,
        kinds: merged(bookkeeping, passwordCommon, [.service: .blob, .generic: .blob]),
        primaryKey: [.account, .service])

    static let internetPassword = ItemSchema(
        itemClass: .internetPassword,
        kinds: merged(
            bookkeeping, passwordCommon,
            [
                .securityDomain: .blob, .server: .blob, .protocol: .number, .authenticationType: .blob,
                .port: .number, .path: .blob,
            ]),
        primaryKey: [.account, .securityDomain, .server, .protocol, .authenticationType, .port, .path])

    static let certificate = ItemSchema(
        itemClass: .certificate,
        kinds: merged(
            bookkeeping,
            [
                .certificateType: .number, .certificateEncoding: .number, .label: .blob, .alias: .blob,
                .subject: .data, .issuer: .data, .serialNumber: .data, .subjectKeyID: .data, .publicKeyHash: .data,
            ]),
        primaryKey: [.certificateType, .issuer, .serialNumber])

    static let key = ItemSchema(
        itemClass: .key,
        kinds: merged(
            bookkeeping,
            [
                .keyClass: .number, .label: .blob, .alias: .blob, .isPermanent: .number, "priv": .number,
                "modi": .number, .applicationLabel: .data, .applicationTag: .blob, .creator: .number, .type: .number,
                .keySizeInBits: .number, .effectiveKeySize: .number, .startDate: .date, .endDate: .date,
                "sens": .number, "asen": .number, "extr": .number, "next": .number, "encr": .number, "decr": .number,
                "drve": .number, "sign": .number, "vrfy": .number, "snrc": .number, "vyrc": .number, "wrap": .number,
                "unwp": .number, .tokenID: .string, .keyStorage: .string,
            ]),
        primaryKey: [
            .keyClass, .applicationLabel, .applicationTag, .creator, .type, .keySizeInBits, .effectiveKeySize,
            .startDate, .endDate,
        ])
}

/// Size limits that keep a keychain usable and refuse absurd input with `errSecParam` instead of a crash.
public enum ItemLimits {
    /// The largest secret (`kSecValueData`) an item may hold: 16 MiB.
    public static let maximumDataBytes = 16 << 20
    /// The largest value of one attribute (text or data): 64 KiB.
    public static let maximumAttributeBytes = 64 << 10
    /// The most Secret Service attributes (`ss.<name>`) one item may have: each is an index entry.
    public static let maximumSecretServiceAttributes = 256
    /// The ports the `Keychain` API and the command line accept for an internet password. Apple's schema
    /// stores `kSecAttrPort` as any integer, so the SecItem functions take any number; the typed front
    /// ends refuse what cannot be a TCP or UDP port.
    public static let ports: ClosedRange<Int> = 0...65_535
}

/// Which attributes a stored class has, for the layers above the engine that compose classes (an identity is
/// a certificate joined with its private key).
package enum SchemaCatalog {
    /// Every attribute name `itemClass` has (bookkeeping included); empty for `identity`.
    package static func attributes(of itemClass: ItemClass) -> Set<AttributeKey> {
        Set(ItemSchema.of(itemClass)?.kinds.keys.map { $0 } ?? [])
    }
}
