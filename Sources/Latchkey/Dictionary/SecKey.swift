/// The string values of Apple's `kSec…` dictionary keys and values that are not attribute names
/// (`OSX/sec/Security/SecItemConstants.c`).
public enum SecKey {
    /// `kSecClass`.
    public static let `class` = "class"
    /// `kSecValueData`.
    public static let valueData = "v_Data"
    /// `kSecValueRef`.
    public static let valueRef = "v_Ref"
    /// `kSecValuePersistentRef`.
    public static let valuePersistentRef = "v_PersistentRef"
    /// `kSecReturnData`.
    public static let returnData = "r_Data"
    /// `kSecReturnAttributes`.
    public static let returnAttributes = "r_Attributes"
    /// `kSecReturnRef`.
    public static let returnRef = "r_Ref"
    /// `kSecReturnPersistentRef`.
    public static let returnPersistentRef = "r_PersistentRef"
    /// `kSecMatchLimit`.
    public static let matchLimit = "m_Limit"
    /// `kSecMatchLimitOne`.
    public static let matchLimitOne = "m_LimitOne"
    /// `kSecMatchLimitAll`.
    public static let matchLimitAll = "m_LimitAll"
    /// `kSecMatchCaseInsensitive` (accepted and ignored: matching is exact, as on Apple's data-protection
    /// keychain).
    public static let matchCaseInsensitive = "m_CaseInsensitive"
    /// `kSecAttrSynchronizableAny`, a value of `kSecAttrSynchronizable` in queries.
    public static let synchronizableAny = "syna"
    /// `kSecUseDataProtectionKeychain` (accepted and ignored: Latchkey is a data-protection keychain).
    public static let useDataProtectionKeychain = "nleg"
    /// `kSecAttrAccessControl` (not supported yet: `errSecUnimplemented`).
    public static let accessControl = "accc"

    /// `kSecMatch…` keys Latchkey knows but cannot honour yet (certificate and trust matching). A query
    /// naming one fails with `errSecUnimplemented` rather than silently matching more than asked.
    static let unsupportedMatches: Set<String> = [
        "m_Policy", "m_ItemList", "m_SearchList", "m_Issuers", "m_EmailAddressIfPresent", "m_SubjectContains",
        "m_HostOrSubdomainOfHost", "m_TrustedOnly", "m_ValidOnDate", "m_SubjectStartsWith", "m_SubjectEndsWith",
        "m_SubjectWholeString", "m_DiacriticInsensitive", "m_WidthInsensitive",
    ]

    /// `kSecUse…` keys that only steer Apple's user interface or authentication context; Latchkey never shows
    /// UI, so they are accepted and ignored.
    static let ignoredUseKeys: Set<String> = [
        "u_OpPrompt", "u_AuthUI", "u_NoAuthUI", "u_AuthCtx", "u_CallerName", "u_CredRef",
    ]
}
