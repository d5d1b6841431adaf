/// The name of an item attribute, as Apple spells it in `kSecAttr…` constants ("acct", "svce", …).
public struct AttributeKey: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    /// Apple's short name, such as "acct".
    public let rawValue: String

    /// Wraps a short name (known or not; the schema decides whether a class has it).
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Wraps a short name.
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }
    public static func < (lhs: AttributeKey, rhs: AttributeKey) -> Bool { lhs.rawValue < rhs.rawValue }

    // Common to every class.
    /// `kSecAttrAccessible`.
    public static let accessible: AttributeKey = "pdmn"
    /// `kSecAttrAccessControl` ("accc"): the item's `AccessControl`, as `AccessControl.attributeValue`.
    public static let accessControl: AttributeKey = "accc"
    /// `kSecAttrAccessGroup`.
    public static let accessGroup: AttributeKey = "agrp"
    /// `kSecAttrSynchronizable`.
    public static let synchronizable: AttributeKey = "sync"
    /// `kSecAttrCreationDate` (set by the keychain).
    public static let creationDate: AttributeKey = "cdat"
    /// `kSecAttrModificationDate` (set by the keychain).
    public static let modificationDate: AttributeKey = "mdat"
    /// `kSecAttrLabel`.
    public static let label: AttributeKey = "labl"
    /// `kSecAttrAlias` (certificates and keys).
    public static let alias: AttributeKey = "alis"

    // Passwords (generic and internet).
    /// `kSecAttrDescription`.
    public static let itemDescription: AttributeKey = "desc"
    /// `kSecAttrComment`.
    public static let comment: AttributeKey = "icmt"
    /// `kSecAttrCreator` (a four-character code as a number).
    public static let creator: AttributeKey = "crtr"
    /// `kSecAttrType` (a four-character code as a number); for keys, `kSecAttrKeyType`.
    public static let type: AttributeKey = "type"
    /// `kSecAttrIsInvisible`.
    public static let isInvisible: AttributeKey = "invi"
    /// `kSecAttrIsNegative`.
    public static let isNegative: AttributeKey = "nega"
    /// `kSecAttrAccount`.
    public static let account: AttributeKey = "acct"
    /// `kSecAttrService` (generic passwords).
    public static let service: AttributeKey = "svce"
    /// `kSecAttrGeneric` (generic passwords).
    public static let generic: AttributeKey = "gena"
    /// `kSecAttrSecurityDomain` (internet passwords).
    public static let securityDomain: AttributeKey = "sdmn"
    /// `kSecAttrServer` (internet passwords).
    public static let server: AttributeKey = "srvr"
    /// `kSecAttrProtocol` (internet passwords; a four-character code such as "htps").
    public static let `protocol`: AttributeKey = "ptcl"
    /// `kSecAttrAuthenticationType` (internet passwords; a four-character code such as "dflt").
    public static let authenticationType: AttributeKey = "atyp"
    /// `kSecAttrPort` (internet passwords).
    public static let port: AttributeKey = "port"
    /// `kSecAttrPath` (internet passwords).
    public static let path: AttributeKey = "path"

    // Certificates.
    /// `kSecAttrCertificateType`.
    public static let certificateType: AttributeKey = "ctyp"
    /// `kSecAttrCertificateEncoding`.
    public static let certificateEncoding: AttributeKey = "cenc"
    /// `kSecAttrSubject` (DER).
    public static let subject: AttributeKey = "subj"
    /// `kSecAttrIssuer` (DER).
    public static let issuer: AttributeKey = "issr"
    /// `kSecAttrSerialNumber`.
    public static let serialNumber: AttributeKey = "slnr"
    /// `kSecAttrSubjectKeyID`.
    public static let subjectKeyID: AttributeKey = "skid"
    /// `kSecAttrPublicKeyHash`.
    public static let publicKeyHash: AttributeKey = "pkhh"

    // Keys.
    /// `kSecAttrKeyClass` (0 public, 1 private, 2 symmetric).
    public static let keyClass: AttributeKey = "kcls"
    /// `kSecAttrApplicationLabel`.
    public static let applicationLabel: AttributeKey = "klbl"
    /// `kSecAttrApplicationTag`.
    public static let applicationTag: AttributeKey = "atag"
    /// `kSecAttrKeySizeInBits`.
    public static let keySizeInBits: AttributeKey = "bsiz"
    /// `kSecAttrEffectiveKeySize`.
    public static let effectiveKeySize: AttributeKey = "esiz"
    /// `kSecAttrStartDate`.
    public static let startDate: AttributeKey = "sdat"
    /// `kSecAttrEndDate`.
    public static let endDate: AttributeKey = "edat"
    /// `kSecAttrIsPermanent`.
    public static let isPermanent: AttributeKey = "perm"
    /// `kSecAttrTokenID`: set on keys the keychain holds and never hands out (`HeldKeyRequest`).
    public static let tokenID: AttributeKey = "tkid"
    /// Where a key the keychain holds lives (a Latchkey extension, set by the keychain beside `tkid`):
    /// `"tpm"` for a P-256 key made inside the TPM, `"software"` for one held in memory where the keychain
    /// runs (`latchkeyd`). `KeyStorage` names the values.
    public static let keyStorage: AttributeKey = "lkst"

    /// The prefix of the Secret Service's free-form attributes on generic passwords: the attribute `name`
    /// of a Secret Service item is stored as `ss.name`, text, sealed and indexed by its keyed digest like
    /// every other attribute (so an exact-match search of them reads no other item).
    public static let secretServicePrefix = "ss."

    /// The attribute a Secret Service item's attribute `name` is stored as.
    public static func secretService(_ name: String) -> AttributeKey {
        AttributeKey(rawValue: secretServicePrefix + name)
    }

    /// Whether `key` is one of the Secret Service's free-form attributes (a name after the prefix).
    public static func isSecretServiceAttribute(_ key: AttributeKey) -> Bool {
        key.rawValue.hasPrefix(secretServicePrefix) && key.rawValue.count > secretServicePrefix.count
    }
}
