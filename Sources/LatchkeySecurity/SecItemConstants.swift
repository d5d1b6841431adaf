// Apple's `kSec…` constants with their exact string values (Security framework, SecItemConstants.c),
// declared as computed values so no shared mutable state is involved.

public import Foundation

/// `kSecClass` ("class").
public var kSecClass: CFString { SecConstant("class") }
/// `kSecClassGenericPassword` ("genp").
public var kSecClassGenericPassword: CFString { SecConstant("genp") }
/// `kSecClassInternetPassword` ("inet").
public var kSecClassInternetPassword: CFString { SecConstant("inet") }
/// `kSecClassCertificate` ("cert").
public var kSecClassCertificate: CFString { SecConstant("cert") }
/// `kSecClassKey` ("keys").
public var kSecClassKey: CFString { SecConstant("keys") }
/// `kSecClassIdentity` ("idnt").
public var kSecClassIdentity: CFString { SecConstant("idnt") }
/// `kSecAttrAccessible` ("pdmn").
public var kSecAttrAccessible: CFString { SecConstant("pdmn") }
/// `kSecAttrAccessibleWhenUnlocked` ("ak").
public var kSecAttrAccessibleWhenUnlocked: CFString { SecConstant("ak") }
/// `kSecAttrAccessibleAfterFirstUnlock` ("ck").
public var kSecAttrAccessibleAfterFirstUnlock: CFString { SecConstant("ck") }
/// `kSecAttrAccessibleAlways` ("dk").
public var kSecAttrAccessibleAlways: CFString { SecConstant("dk") }
/// `kSecAttrAccessibleWhenUnlockedThisDeviceOnly` ("aku").
public var kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString { SecConstant("aku") }
/// `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly` ("cku").
public var kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString { SecConstant("cku") }
/// `kSecAttrAccessibleAlwaysThisDeviceOnly` ("dku").
public var kSecAttrAccessibleAlwaysThisDeviceOnly: CFString { SecConstant("dku") }
/// `kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly` ("akpu").
public var kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString { SecConstant("akpu") }
/// `kSecAttrAccessGroup` ("agrp").
public var kSecAttrAccessGroup: CFString { SecConstant("agrp") }
/// `kSecAttrSynchronizable` ("sync").
public var kSecAttrSynchronizable: CFString { SecConstant("sync") }
/// `kSecAttrSynchronizableAny` ("syna").
public var kSecAttrSynchronizableAny: CFString { SecConstant("syna") }
/// `kSecAttrCreationDate` ("cdat").
public var kSecAttrCreationDate: CFString { SecConstant("cdat") }
/// `kSecAttrModificationDate` ("mdat").
public var kSecAttrModificationDate: CFString { SecConstant("mdat") }
/// `kSecAttrDescription` ("desc").
public var kSecAttrDescription: CFString { SecConstant("desc") }
/// `kSecAttrComment` ("icmt").
public var kSecAttrComment: CFString { SecConstant("icmt") }
/// `kSecAttrCreator` ("crtr").
public var kSecAttrCreator: CFString { SecConstant("crtr") }
/// `kSecAttrType` ("type").
public var kSecAttrType: CFString { SecConstant("type") }
/// `kSecAttrLabel` ("labl").
public var kSecAttrLabel: CFString { SecConstant("labl") }
/// `kSecAttrIsInvisible` ("invi").
public var kSecAttrIsInvisible: CFString { SecConstant("invi") }
/// `kSecAttrIsNegative` ("nega").
public var kSecAttrIsNegative: CFString { SecConstant("nega") }
/// `kSecAttrAccount` ("acct").
public var kSecAttrAccount: CFString { SecConstant("acct") }
/// `kSecAttrService` ("svce").
public var kSecAttrService: CFString { SecConstant("svce") }
/// `kSecAttrGeneric` ("gena").
public var kSecAttrGeneric: CFString { SecConstant("gena") }
/// `kSecAttrSecurityDomain` ("sdmn").
public var kSecAttrSecurityDomain: CFString { SecConstant("sdmn") }
/// `kSecAttrServer` ("srvr").
public var kSecAttrServer: CFString { SecConstant("srvr") }
/// `kSecAttrProtocol` ("ptcl").
public var kSecAttrProtocol: CFString { SecConstant("ptcl") }
/// `kSecAttrAuthenticationType` ("atyp").
public var kSecAttrAuthenticationType: CFString { SecConstant("atyp") }
/// `kSecAttrPort` ("port").
public var kSecAttrPort: CFString { SecConstant("port") }
/// `kSecAttrPath` ("path").
public var kSecAttrPath: CFString { SecConstant("path") }
/// `kSecAttrSubject` ("subj").
public var kSecAttrSubject: CFString { SecConstant("subj") }
/// `kSecAttrIssuer` ("issr").
public var kSecAttrIssuer: CFString { SecConstant("issr") }
/// `kSecAttrSerialNumber` ("slnr").
public var kSecAttrSerialNumber: CFString { SecConstant("slnr") }
/// `kSecAttrSubjectKeyID` ("skid").
public var kSecAttrSubjectKeyID: CFString { SecConstant("skid") }
/// `kSecAttrPublicKeyHash` ("pkhh").
public var kSecAttrPublicKeyHash: CFString { SecConstant("pkhh") }
/// `kSecAttrCertificateType` ("ctyp").
public var kSecAttrCertificateType: CFString { SecConstant("ctyp") }
/// `kSecAttrCertificateEncoding` ("cenc").
public var kSecAttrCertificateEncoding: CFString { SecConstant("cenc") }
/// `kSecAttrKeyClass` ("kcls").
public var kSecAttrKeyClass: CFString { SecConstant("kcls") }
/// `kSecAttrKeyClassPublic` ("0").
public var kSecAttrKeyClassPublic: CFString { SecConstant("0") }
/// `kSecAttrKeyClassPrivate` ("1").
public var kSecAttrKeyClassPrivate: CFString { SecConstant("1") }
/// `kSecAttrKeyClassSymmetric` ("2").
public var kSecAttrKeyClassSymmetric: CFString { SecConstant("2") }
/// `kSecAttrApplicationLabel` ("klbl").
public var kSecAttrApplicationLabel: CFString { SecConstant("klbl") }
/// `kSecAttrIsPermanent` ("perm").
public var kSecAttrIsPermanent: CFString { SecConstant("perm") }
/// `kSecAttrIsSensitive` ("sens").
public var kSecAttrIsSensitive: CFString { SecConstant("sens") }
/// `kSecAttrIsExtractable` ("extr").
public var kSecAttrIsExtractable: CFString { SecConstant("extr") }
/// `kSecAttrApplicationTag` ("atag").
public var kSecAttrApplicationTag: CFString { SecConstant("atag") }
/// `kSecAttrKeyType` ("type").
public var kSecAttrKeyType: CFString { SecConstant("type") }
/// `kSecAttrKeyTypeRSA` ("42").
public var kSecAttrKeyTypeRSA: CFString { SecConstant("42") }
/// `kSecAttrKeyTypeEC` ("73").
public var kSecAttrKeyTypeEC: CFString { SecConstant("73") }
/// `kSecAttrKeyTypeECSECPrimeRandom` ("73").
public var kSecAttrKeyTypeECSECPrimeRandom: CFString { SecConstant("73") }
/// `kSecAttrKeySizeInBits` ("bsiz").
public var kSecAttrKeySizeInBits: CFString { SecConstant("bsiz") }
/// `kSecAttrEffectiveKeySize` ("esiz").
public var kSecAttrEffectiveKeySize: CFString { SecConstant("esiz") }
/// `kSecAttrCanEncrypt` ("encr").
public var kSecAttrCanEncrypt: CFString { SecConstant("encr") }
/// `kSecAttrCanDecrypt` ("decr").
public var kSecAttrCanDecrypt: CFString { SecConstant("decr") }
/// `kSecAttrCanDerive` ("drve").
public var kSecAttrCanDerive: CFString { SecConstant("drve") }
/// `kSecAttrCanSign` ("sign").
public var kSecAttrCanSign: CFString { SecConstant("sign") }
/// `kSecAttrCanVerify` ("vrfy").
public var kSecAttrCanVerify: CFString { SecConstant("vrfy") }
/// `kSecAttrCanWrap` ("wrap").
public var kSecAttrCanWrap: CFString { SecConstant("wrap") }
/// `kSecAttrCanUnwrap` ("unwp").
public var kSecAttrCanUnwrap: CFString { SecConstant("unwp") }
/// `kSecAttrStartDate` ("sdat").
public var kSecAttrStartDate: CFString { SecConstant("sdat") }
/// `kSecAttrEndDate` ("edat").
public var kSecAttrEndDate: CFString { SecConstant("edat") }
/// `kSecAttrAlias` ("alis").
public var kSecAttrAlias: CFString { SecConstant("alis") }
/// `kSecAttrAccessControl` ("accc").
public var kSecAttrAccessControl: CFString { SecConstant("accc") }
/// `kSecAttrPersistentReference` ("persistref").
public var kSecAttrPersistentReference: CFString { SecConstant("persistref") }
/// `kSecAttrTokenID` ("tkid").
public var kSecAttrTokenID: CFString { SecConstant("tkid") }
/// `kSecAttrLatchkeyKeyStorage` ("lkst"), a Latchkey extension: where a key the keychain holds lives —
/// `kSecAttrLatchkeyKeyStorageTPM` (made inside the TPM) or `kSecAttrLatchkeyKeyStorageSoftware` (held in
/// memory where the keychain runs). `SecKeyCopyAttributes` reports it; the keychain sets it.
public var kSecAttrLatchkeyKeyStorage: CFString { SecConstant("lkst") }
/// `kSecAttrLatchkeyKeyStorageTPM` ("tpm"): a P-256 key made inside the TPM, never out of it.
public var kSecAttrLatchkeyKeyStorageTPM: CFString { SecConstant("tpm") }
/// `kSecAttrLatchkeyKeyStorageSoftware` ("software"): a key held in memory where the keychain runs.
public var kSecAttrLatchkeyKeyStorageSoftware: CFString { SecConstant("software") }
/// `kSecAttrSyncViewHint` ("vwht").
public var kSecAttrSyncViewHint: CFString { SecConstant("vwht") }
/// `kSecValueData` ("v_Data").
public var kSecValueData: CFString { SecConstant("v_Data") }
/// `kSecValueRef` ("v_Ref").
public var kSecValueRef: CFString { SecConstant("v_Ref") }
/// `kSecValuePersistentRef` ("v_PersistentRef").
public var kSecValuePersistentRef: CFString { SecConstant("v_PersistentRef") }
/// `kSecReturnData` ("r_Data").
public var kSecReturnData: CFString { SecConstant("r_Data") }
/// `kSecReturnAttributes` ("r_Attributes").
public var kSecReturnAttributes: CFString { SecConstant("r_Attributes") }
/// `kSecReturnRef` ("r_Ref").
public var kSecReturnRef: CFString { SecConstant("r_Ref") }
/// `kSecReturnPersistentRef` ("r_PersistentRef").
public var kSecReturnPersistentRef: CFString { SecConstant("r_PersistentRef") }
/// `kSecMatchLimit` ("m_Limit").
public var kSecMatchLimit: CFString { SecConstant("m_Limit") }
/// `kSecMatchLimitOne` ("m_LimitOne").
public var kSecMatchLimitOne: CFString { SecConstant("m_LimitOne") }
/// `kSecMatchLimitAll` ("m_LimitAll").
public var kSecMatchLimitAll: CFString { SecConstant("m_LimitAll") }
/// `kSecMatchCaseInsensitive` ("m_CaseInsensitive").
public var kSecMatchCaseInsensitive: CFString { SecConstant("m_CaseInsensitive") }
/// `kSecMatchPolicy` ("m_Policy").
public var kSecMatchPolicy: CFString { SecConstant("m_Policy") }
/// `kSecMatchItemList` ("m_ItemList").
public var kSecMatchItemList: CFString { SecConstant("m_ItemList") }
/// `kSecMatchSearchList` ("m_SearchList").
public var kSecMatchSearchList: CFString { SecConstant("m_SearchList") }
/// `kSecMatchIssuers` ("m_Issuers").
public var kSecMatchIssuers: CFString { SecConstant("m_Issuers") }
/// `kSecMatchEmailAddressIfPresent` ("m_EmailAddressIfPresent").
public var kSecMatchEmailAddressIfPresent: CFString { SecConstant("m_EmailAddressIfPresent") }
/// `kSecMatchSubjectContains` ("m_SubjectContains").
public var kSecMatchSubjectContains: CFString { SecConstant("m_SubjectContains") }
/// `kSecMatchSubjectStartsWith` ("m_SubjectStartsWith"): certificates and identities whose common name starts
/// with this string (macOS's file-based keychain's rule).
public var kSecMatchSubjectStartsWith: CFString { SecConstant("m_SubjectStartsWith") }
/// `kSecMatchSubjectEndsWith` ("m_SubjectEndsWith"): whose common name ends with this string.
public var kSecMatchSubjectEndsWith: CFString { SecConstant("m_SubjectEndsWith") }
/// `kSecMatchSubjectWholeString` ("m_SubjectWholeString"): whose common name is this string.
public var kSecMatchSubjectWholeString: CFString { SecConstant("m_SubjectWholeString") }
/// `kSecMatchDiacriticInsensitive` ("m_DiacriticInsensitive"): the subject filters ignore diacritics.
public var kSecMatchDiacriticInsensitive: CFString { SecConstant("m_DiacriticInsensitive") }
/// `kSecMatchWidthInsensitive` ("m_WidthInsensitive"): the subject filters ignore character width.
public var kSecMatchWidthInsensitive: CFString { SecConstant("m_WidthInsensitive") }
/// `kSecMatchHostOrSubdomainOfHost` ("m_HostOrSubdomainOfHost"): internet passwords whose server is this host or a
/// subdomain of it.
public var kSecMatchHostOrSubdomainOfHost: CFString { SecConstant("m_HostOrSubdomainOfHost") }
/// `kSecMatchTrustedOnly` ("m_TrustedOnly").
public var kSecMatchTrustedOnly: CFString { SecConstant("m_TrustedOnly") }
/// `kSecMatchValidOnDate` ("m_ValidOnDate").
public var kSecMatchValidOnDate: CFString { SecConstant("m_ValidOnDate") }
/// `kSecUseDataProtectionKeychain` ("nleg").
public var kSecUseDataProtectionKeychain: CFString { SecConstant("nleg") }
/// `kSecUseOperationPrompt` ("u_OpPrompt").
public var kSecUseOperationPrompt: CFString { SecConstant("u_OpPrompt") }
/// `kSecUseAuthenticationUI` ("u_AuthUI").
public var kSecUseAuthenticationUI: CFString { SecConstant("u_AuthUI") }
/// `kSecUseAuthenticationUIAllow` ("u_AuthUIA").
public var kSecUseAuthenticationUIAllow: CFString { SecConstant("u_AuthUIA") }
/// `kSecUseAuthenticationUIFail` ("u_AuthUIF").
public var kSecUseAuthenticationUIFail: CFString { SecConstant("u_AuthUIF") }
/// `kSecUseAuthenticationUISkip` ("u_AuthUIS").
public var kSecUseAuthenticationUISkip: CFString { SecConstant("u_AuthUIS") }
/// `kSecUseNoAuthenticationUI` ("u_NoAuthUI"; deprecated by Apple: true is `kSecUseAuthenticationUIFail`).
public var kSecUseNoAuthenticationUI: CFString { SecConstant("u_NoAuthUI") }
/// `kSecUseAuthenticationContext` ("u_AuthCtx").
public var kSecUseAuthenticationContext: CFString { SecConstant("u_AuthCtx") }
/// `kSecAttrProtocolFTP` ("ftp ").
public var kSecAttrProtocolFTP: CFString { SecConstant("ftp ") }
/// `kSecAttrProtocolFTPAccount` ("ftpa").
public var kSecAttrProtocolFTPAccount: CFString { SecConstant("ftpa") }
/// `kSecAttrProtocolHTTP` ("http").
public var kSecAttrProtocolHTTP: CFString { SecConstant("http") }
/// `kSecAttrProtocolIRC` ("irc ").
public var kSecAttrProtocolIRC: CFString { SecConstant("irc ") }
/// `kSecAttrProtocolNNTP` ("nntp").
public var kSecAttrProtocolNNTP: CFString { SecConstant("nntp") }
/// `kSecAttrProtocolPOP3` ("pop3").
public var kSecAttrProtocolPOP3: CFString { SecConstant("pop3") }
/// `kSecAttrProtocolSMTP` ("smtp").
public var kSecAttrProtocolSMTP: CFString { SecConstant("smtp") }
/// `kSecAttrProtocolSOCKS` ("sox ").
public var kSecAttrProtocolSOCKS: CFString { SecConstant("sox ") }
/// `kSecAttrProtocolIMAP` ("imap").
public var kSecAttrProtocolIMAP: CFString { SecConstant("imap") }
/// `kSecAttrProtocolLDAP` ("ldap").
public var kSecAttrProtocolLDAP: CFString { SecConstant("ldap") }
/// `kSecAttrProtocolAppleTalk` ("atlk").
public var kSecAttrProtocolAppleTalk: CFString { SecConstant("atlk") }
/// `kSecAttrProtocolAFP` ("afp ").
public var kSecAttrProtocolAFP: CFString { SecConstant("afp ") }
/// `kSecAttrProtocolTelnet` ("teln").
public var kSecAttrProtocolTelnet: CFString { SecConstant("teln") }
/// `kSecAttrProtocolSSH` ("ssh ").
public var kSecAttrProtocolSSH: CFString { SecConstant("ssh ") }
/// `kSecAttrProtocolFTPS` ("ftps").
public var kSecAttrProtocolFTPS: CFString { SecConstant("ftps") }
/// `kSecAttrProtocolHTTPS` ("htps").
public var kSecAttrProtocolHTTPS: CFString { SecConstant("htps") }
/// `kSecAttrProtocolHTTPProxy` ("htpx").
public var kSecAttrProtocolHTTPProxy: CFString { SecConstant("htpx") }
/// `kSecAttrProtocolHTTPSProxy` ("htsx").
public var kSecAttrProtocolHTTPSProxy: CFString { SecConstant("htsx") }
/// `kSecAttrProtocolFTPProxy` ("ftpx").
public var kSecAttrProtocolFTPProxy: CFString { SecConstant("ftpx") }
/// `kSecAttrProtocolSMB` ("smb ").
public var kSecAttrProtocolSMB: CFString { SecConstant("smb ") }
/// `kSecAttrProtocolRTSP` ("rtsp").
public var kSecAttrProtocolRTSP: CFString { SecConstant("rtsp") }
/// `kSecAttrProtocolRTSPProxy` ("rtsx").
public var kSecAttrProtocolRTSPProxy: CFString { SecConstant("rtsx") }
/// `kSecAttrProtocolDAAP` ("daap").
public var kSecAttrProtocolDAAP: CFString { SecConstant("daap") }
/// `kSecAttrProtocolEPPC` ("eppc").
public var kSecAttrProtocolEPPC: CFString { SecConstant("eppc") }
/// `kSecAttrProtocolIPP` ("ipp ").
public var kSecAttrProtocolIPP: CFString { SecConstant("ipp ") }
/// `kSecAttrProtocolNNTPS` ("ntps").
public var kSecAttrProtocolNNTPS: CFString { SecConstant("ntps") }
/// `kSecAttrProtocolLDAPS` ("ldps").
public var kSecAttrProtocolLDAPS: CFString { SecConstant("ldps") }
/// `kSecAttrProtocolTelnetS` ("tels").
public var kSecAttrProtocolTelnetS: CFString { SecConstant("tels") }
/// `kSecAttrProtocolIMAPS` ("imps").
public var kSecAttrProtocolIMAPS: CFString { SecConstant("imps") }
/// `kSecAttrProtocolIRCS` ("ircs").
public var kSecAttrProtocolIRCS: CFString { SecConstant("ircs") }
/// `kSecAttrProtocolPOP3S` ("pops").
public var kSecAttrProtocolPOP3S: CFString { SecConstant("pops") }
/// `kSecAttrAuthenticationTypeNTLM` ("ntlm").
public var kSecAttrAuthenticationTypeNTLM: CFString { SecConstant("ntlm") }
/// `kSecAttrAuthenticationTypeMSN` ("msna").
public var kSecAttrAuthenticationTypeMSN: CFString { SecConstant("msna") }
/// `kSecAttrAuthenticationTypeDPA` ("dpaa").
public var kSecAttrAuthenticationTypeDPA: CFString { SecConstant("dpaa") }
/// `kSecAttrAuthenticationTypeRPA` ("rpaa").
public var kSecAttrAuthenticationTypeRPA: CFString { SecConstant("rpaa") }
/// `kSecAttrAuthenticationTypeHTTPBasic` ("http").
public var kSecAttrAuthenticationTypeHTTPBasic: CFString { SecConstant("http") }
/// `kSecAttrAuthenticationTypeHTTPDigest` ("httd").
public var kSecAttrAuthenticationTypeHTTPDigest: CFString { SecConstant("httd") }
/// `kSecAttrAuthenticationTypeHTMLForm` ("form").
public var kSecAttrAuthenticationTypeHTMLForm: CFString { SecConstant("form") }
/// `kSecAttrAuthenticationTypeDefault` ("dflt").
public var kSecAttrAuthenticationTypeDefault: CFString { SecConstant("dflt") }

/// `errSecInternal` (-26276): "An internal error occurred." — from Apple's private `SecBasePriv.h`, not
/// `SecBase.h`; Latchkey returns it for a failure that is its own fault, so it is declared here.
public var errSecInternal: OSStatus { -26276 }
