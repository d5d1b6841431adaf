/// The string values of Apple's `kSec…` dictionary keys and values that are not attribute names
/// (`OSX/sec/Security/SecItemConstants.c`), for the dictionary layer. (Not `SecKey`: that is Apple's key
/// type's name.)
package enum SecItemKey {
    /// `kSecClass`.
    package static let `class` = "class"
    /// `kSecValueData`.
    package static let valueData = "v_Data"
    /// `kSecValueRef`.
    package static let valueRef = "v_Ref"
    /// `kSecValuePersistentRef`.
    package static let valuePersistentRef = "v_PersistentRef"
    /// `kSecAttrIsPermanent`: whether `SecKeyCreateRandomKey` stores a key (no attribute of the item).
    package static let isPermanent = "perm"
    /// `kSecReturnData`.
    package static let returnData = "r_Data"
    /// `kSecReturnAttributes`.
    package static let returnAttributes = "r_Attributes"
    /// `kSecReturnRef`.
    package static let returnRef = "r_Ref"
    /// `kSecReturnPersistentRef`.
    package static let returnPersistentRef = "r_PersistentRef"
    /// `kSecMatchLimit`.
    package static let matchLimit = "m_Limit"
    /// `kSecMatchLimitOne`.
    package static let matchLimitOne = "m_LimitOne"
    /// `kSecMatchLimitAll`.
    package static let matchLimitAll = "m_LimitAll"
    /// `kSecMatchCaseInsensitive` (attribute matching stays exact, as on Apple's data-protection keychain;
    /// it steers the subject filters).
    package static let matchCaseInsensitive = "m_CaseInsensitive"
    /// `kSecMatchDiacriticInsensitive` (steers the subject filters).
    package static let matchDiacriticInsensitive = "m_DiacriticInsensitive"
    /// `kSecMatchWidthInsensitive` (steers the subject filters).
    package static let matchWidthInsensitive = "m_WidthInsensitive"
    /// `kSecMatchIssuers`.
    package static let matchIssuers = "m_Issuers"
    /// `kSecMatchValidOnDate`.
    package static let matchValidOnDate = "m_ValidOnDate"
    /// `kSecMatchSubjectContains`.
    package static let matchSubjectContains = "m_SubjectContains"
    /// `kSecMatchSubjectStartsWith` (macOS).
    package static let matchSubjectStartsWith = "m_SubjectStartsWith"
    /// `kSecMatchSubjectEndsWith` (macOS).
    package static let matchSubjectEndsWith = "m_SubjectEndsWith"
    /// `kSecMatchSubjectWholeString` (macOS).
    package static let matchSubjectWholeString = "m_SubjectWholeString"
    /// `kSecMatchHostOrSubdomainOfHost`.
    package static let matchHostOrSubdomainOfHost = "m_HostOrSubdomainOfHost"
    /// `kSecMatchPolicy`.
    package static let matchPolicy = "m_Policy"
    /// `kSecMatchEmailAddressIfPresent`.
    package static let matchEmailAddressIfPresent = "m_EmailAddressIfPresent"
    /// `kSecMatchItemList` (macOS; `SecItemCopyMatching` through `ServiceBackend`).
    package static let matchItemList = "m_ItemList"
    /// `kSecMatchTrustedOnly`.
    package static let matchTrustedOnly = "m_TrustedOnly"
    /// `kSecAttrSynchronizableAny`, a value of `kSecAttrSynchronizable` in queries.
    package static let synchronizableAny = "syna"
    /// `kSecUseDataProtectionKeychain` (accepted and ignored: Latchkey is a data-protection keychain).
    package static let useDataProtectionKeychain = "nleg"
    /// `kSecAttrAccessControl`.
    package static let accessControl = "accc"
    /// `kSecUseAuthenticationUI`.
    package static let useAuthenticationUI = "u_AuthUI"
    /// `kSecUseNoAuthenticationUI` (deprecated by Apple: true means `kSecUseAuthenticationUIFail`).
    package static let useNoAuthenticationUI = "u_NoAuthUI"
    /// `kSecUseOperationPrompt`.
    package static let useOperationPrompt = "u_OpPrompt"

    /// `kSecMatch…` keys Latchkey knows but cannot honour yet (macOS's keychain lists; its item lists outside
    /// `ServiceBackend`'s searches). A query naming one fails with `errSecUnimplemented` rather than silently
    /// matching more than asked.
    static let unsupportedMatches: Set<String> = [matchItemList, "m_SearchList"]

    /// `kSecUse…` keys that only steer Apple's own user interface or authentication context (an `LAContext`,
    /// a caller name, a credential reference): accepted and ignored.
    static let ignoredUseKeys: Set<String> = ["u_AuthCtx", "u_CallerName", "u_CredRef"]
}
