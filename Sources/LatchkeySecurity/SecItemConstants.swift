// Apple's `kSec…` constants with their exact string values (Security framework, SecItemConstants.c),
// declared as computed values so no shared mutable state is involved.

public import Foundation

/// `kSecClass` ("class").
public var kSecClass: CFString { "class" }
/// `kSecClassGenericPassword` ("genp").
public var kSecClassGenericPassword: CFString { "genp" }
/// `kSecClassInternetPassword` ("inet").
public var kSecClassInternetPassword: CFString { "inet" }
/// `kSecClassCertificate` ("cert").
public var kSecClassCertificate: CFString { "cert" }
/// `kSecClassKey` ("keys").
public var kSecClassKey: CFString { "keys" }
/// `kSecClassIdentity` ("idnt").
public var kSecClassIdentity: CFString { "idnt" }
/// `kSecAttrAccessible` ("pdmn").
public var kSecAttrAccessible: CFString { "pdmn" }
/// `kSecAttrAccessibleWhenUnlocked` ("ak").
public var kSecAttrAccessibleWhenUnlocked: CFString { "ak" }
/// `kSecAttrAccessibleAfterFirstUnlock` ("ck").
public var kSecAttrAccessibleAfterFirstUnlock: CFString { "ck" }
/// `kSecAttrAccessibleAlways` ("dk").
public var kSecAttrAccessibleAlways: CFString { "dk" }
/// `kSecAttrAccessibleWhenUnlockedThisDeviceOnly` ("aku").
public var kSecAttrAccessibleWhenUnlockedThisDeviceOnly: CFString { "aku" }
/// `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly` ("cku").
public var kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString { "cku" }
/// `kSecAttrAccessibleAlwaysThisDeviceOnly` ("dku").
public var kSecAttrAccessibleAlwaysThisDeviceOnly: CFString { "dku" }
/// `kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly` ("akpu").
public var kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: CFString { "akpu" }
/// `kSecAttrAccessGroup` ("agrp").
public var kSecAttrAccessGroup: CFString { "agrp" }
/// `kSecAttrSynchronizable` ("sync").
public var kSecAttrSynchronizable: CFString { "sync" }
/// `kSecAttrSynchronizableAny` ("syna").
public var kSecAttrSynchronizableAny: CFString { "syna" }
/// `kSecAttrCreationDate` ("cdat").
public var kSecAttrCreationDate: CFString { "cdat" }
/// `kSecAttrModificationDate` ("mdat").
public var kSecAttrModificationDate: CFString { "mdat" }
/// `kSecAttrDescription` ("desc").
public var kSecAttrDescription: CFString { "desc" }
/// `kSecAttrComment` ("icmt").
public var kSecAttrComment: CFString { "icmt" }
/// `kSecAttrCreator` ("crtr").
public var kSecAttrCreator: CFString { "crtr" }
/// `kSecAttrType` ("type").
public var kSecAttrType: CFString { "type" }
/// `kSecAttrLabel` ("labl").
public var kSecAttrLabel: CFString { "labl" }
/// `kSecAttrIsInvisible` ("invi").
public var kSecAttrIsInvisible: CFString { "invi" }
/// `kSecAttrIsNegative` ("nega").
public var kSecAttrIsNegative: CFString { "nega" }
/// `kSecAttrAccount` ("acct").
public var kSecAttrAccount: CFString { "acct" }
/// `kSecAttrService` ("svce").
public var kSecAttrService: CFString { "svce" }
/// `kSecAttrGeneric` ("gena").
public var kSecAttrGeneric: CFString { "gena" }
/// `kSecAttrSecurityDomain` ("sdmn").
public var kSecAttrSecurityDomain: CFString { "sdmn" }
/// `kSecAttrServer` ("srvr").
public var kSecAttrServer: CFString { "srvr" }
/// `kSecAttrProtocol` ("ptcl").
public var kSecAttrProtocol: CFString { "ptcl" }
/// `kSecAttrAuthenticationType` ("atyp").
public var kSecAttrAuthenticationType: CFString { "atyp" }
/// `kSecAttrPort` ("port").
public var kSecAttrPort: CFString { "port" }
/// `kSecAttrPath` ("path").
public var kSecAttrPath: CFString { "path" }
/// `kSecAttrSubject` ("subj").
public var kSecAttrSubject: CFString { "subj" }
/// `kSecAttrIssuer` ("issr").
public var kSecAttrIssuer: CFString { "issr" }
/// `kSecAttrSerialNumber` ("slnr").
public var kSecAttrSerialNumber: CFString { "slnr" }
/// `kSecAttrSubjectKeyID` ("skid").
public var kSecAttrSubjectKeyID: CFString { "skid" }
/// `kSecAttrPublicKeyHash` ("pkhh").
public var kSecAttrPublicKeyHash: CFString { "pkhh" }
/// `kSecAttrCertificateType` ("ctyp").
public var kSecAttrCertificateType: CFString { "ctyp" }
/// `kSecAttrCertificateEncoding` ("cenc").
public var kSecAttrCertificateEncoding: CFString { "cenc" }
/// `kSecAttrKeyClass` ("kcls").
public var kSecAttrKeyClass: CFString { "kcls" }
/// `kSecAttrKeyClassPublic` ("0").
public var kSecAttrKeyClassPublic: CFString { "0" }
/// `kSecAttrKeyClassPrivate` ("1").
public var kSecAttrKeyClassPrivate: CFString { "1" }
/// `kSecAttrKeyClassSymmetric` ("2").
public var kSecAttrKeyClassSymmetric: CFString { "2" }
/// `kSecAttrApplicationLabel` ("klbl").
public var kSecAttrApplicationLabel: CFString { "klbl" }
/// `kSecAttrIsPermanent` ("perm").
public var kSecAttrIsPermanent: CFString { "perm" }
/// `kSecAttrIsSensitive` ("sens").
public var kSecAttrIsSensitive: CFString { "sens" }
/// `kSecAttrIsExtractable` ("extr").
public var kSecAttrIsExtractable: CFString { "extr" }
/// `kSecAttrApplicationTag` ("atag").
public var kSecAttrApplicationTag: CFString { "atag" }
/// `kSecAttrKeyType` ("type").
public var kSecAttrKeyType: CFString { "type" }
/// `kSecAttrKeyTypeRSA` ("42").
public var kSecAttrKeyTypeRSA: CFString { "42" }
/// `kSecAttrKeyTypeEC` ("73").
public var kSecAttrKeyTypeEC: CFString { "73" }
/// `kSecAttrKeyTypeECSECPrimeRandom` ("73").
public var kSecAttrKeyTypeECSECPrimeRandom: CFString { "73" }
/// `kSecAttrKeySizeInBits` ("bsiz").
public var kSecAttrKeySizeInBits: CFString { "bsiz" }
/// `kSecAttrEffectiveKeySize` ("esiz").
public var kSecAttrEffectiveKeySize: CFString { "esiz" }
/// `kSecAttrCanEncrypt` ("encr").
public var kSecAttrCanEncrypt: CFString { "encr" }
/// `kSecAttrCanDecrypt` ("decr").
public var kSecAttrCanDecrypt: CFString { "decr" }
/// `kSecAttrCanDerive` ("drve").
public var kSecAttrCanDerive: CFString { "drve" }
/// `kSecAttrCanSign` ("sign").
public var kSecAttrCanSign: CFString { "sign" }
/// `kSecAttrCanVerify` ("vrfy").
public var kSecAttrCanVerify: CFString { "vrfy" }
/// `kSecAttrCanWrap` ("wrap").
public var kSecAttrCanWrap: CFString { "wrap" }
/// `kSecAttrCanUnwrap` ("unwp").
public var kSecAttrCanUnwrap: CFString { "unwp" }
/// `kSecAttrStartDate` ("sdat").
public var kSecAttrStartDate: CFString { "sdat" }
/// `kSecAttrEndDate` ("edat").
public var kSecAttrEndDate: CFString { "edat" }
/// `kSecAttrAlias` ("alis").
public var kSecAttrAlias: CFString { "alis" }
/// `kSecAttrAccessControl` ("accc").
public var kSecAttrAccessControl: CFString { "accc" }
/// `kSecAttrPersistentReference` ("persistref").
public var kSecAttrPersistentReference: CFString { "persistref" }
/// `kSecAttrTokenID` ("tkid").
public var kSecAttrTokenID: CFString { "tkid" }
/// `kSecAttrSyncViewHint` ("vwht").
public var kSecAttrSyncViewHint: CFString { "vwht" }
/// `kSecValueData` ("v_Data").
public var kSecValueData: CFString { "v_Data" }
/// `kSecValueRef` ("v_Ref").
public var kSecValueRef: CFString { "v_Ref" }
/// `kSecValuePersistentRef` ("v_PersistentRef").
public var kSecValuePersistentRef: CFString { "v_PersistentRef" }
/// `kSecReturnData` ("r_Data").
public var kSecReturnData: CFString { "r_Data" }
/// `kSecReturnAttributes` ("r_Attributes").
public var kSecReturnAttributes: CFString { "r_Attributes" }
/// `kSecReturnRef` ("r_Ref").
public var kSecReturnRef: CFString { "r_Ref" }
/// `kSecReturnPersistentRef` ("r_PersistentRef").
public var kSecReturnPersistentRef: CFString { "r_PersistentRef" }
/// `kSecMatchLimit` ("m_Limit").
public var kSecMatchLimit: CFString { "m_Limit" }
/// `kSecMatchLimitOne` ("m_LimitOne").
public var kSecMatchLimitOne: CFString { "m_LimitOne" }
/// `kSecMatchLimitAll` ("m_LimitAll").
public var kSecMatchLimitAll: CFString { "m_LimitAll" }
/// `kSecMatchCaseInsensitive` ("m_CaseInsensitive").
public var kSecMatchCaseInsensitive: CFString { "m_CaseInsensitive" }
/// `kSecMatchPolicy` ("m_Policy").
public var kSecMatchPolicy: CFString { "m_Policy" }
/// `kSecMatchItemList` ("m_ItemList").
public var kSecMatchItemList: CFString { "m_ItemList" }
/// `kSecMatchSearchList` ("m_SearchList").
public var kSecMatchSearchList: CFString { "m_SearchList" }
/// `kSecMatchIssuers` ("m_Issuers").
public var kSecMatchIssuers: CFString { "m_Issuers" }
/// `kSecMatchEmailAddressIfPresent` ("m_EmailAddressIfPresent").
public var kSecMatchEmailAddressIfPresent: CFString { "m_EmailAddressIfPresent" }
/// `kSecMatchSubjectContains` ("m_SubjectContains").
public var kSecMatchSubjectContains: CFString { "m_SubjectContains" }
/// `kSecMatchTrustedOnly` ("m_TrustedOnly").
public var kSecMatchTrustedOnly: CFString { "m_TrustedOnly" }
/// `kSecMatchValidOnDate` ("m_ValidOnDate").
public var kSecMatchValidOnDate: CFString { "m_ValidOnDate" }
/// `kSecUseDataProtectionKeychain` ("nleg").
public var kSecUseDataProtectionKeychain: CFString { "nleg" }
/// `kSecUseOperationPrompt` ("u_OpPrompt").
public var kSecUseOperationPrompt: CFString { "u_OpPrompt" }
/// `kSecUseAuthenticationUI` ("u_AuthUI").
public var kSecUseAuthenticationUI: CFString { "u_AuthUI" }
/// `kSecUseAuthenticationUIAllow` ("u_AuthUIA").
public var kSecUseAuthenticationUIAllow: CFString { "u_AuthUIA" }
/// `kSecUseAuthenticationUIFail` ("u_AuthUIF").
public var kSecUseAuthenticationUIFail: CFString { "u_AuthUIF" }
/// `kSecUseAuthenticationUISkip` ("u_AuthUIS").
public var kSecUseAuthenticationUISkip: CFString { "u_AuthUIS" }
/// `kSecUseAuthenticationContext` ("u_AuthCtx").
public var kSecUseAuthenticationContext: CFString { "u_AuthCtx" }
/// `kSecAttrProtocolFTP` ("ftp ").
public var kSecAttrProtocolFTP: CFString { "ftp " }
/// `kSecAttrProtocolFTPAccount` ("ftpa").
public var kSecAttrProtocolFTPAccount: CFString { "ftpa" }
/// `kSecAttrProtocolHTTP` ("http").
public var kSecAttrProtocolHTTP: CFString { "http" }
/// `kSecAttrProtocolIRC` ("irc ").
public var kSecAttrProtocolIRC: CFString { "irc " }
/// `kSecAttrProtocolNNTP` ("nntp").
public var kSecAttrProtocolNNTP: CFString { "nntp" }
/// `kSecAttrProtocolPOP3` ("pop3").
public var kSecAttrProtocolPOP3: CFString { "pop3" }
/// `kSecAttrProtocolSMTP` ("smtp").
public var kSecAttrProtocolSMTP: CFString { "smtp" }
/// `kSecAttrProtocolSOCKS` ("sox ").
public var kSecAttrProtocolSOCKS: CFString { "sox " }
/// `kSecAttrProtocolIMAP` ("imap").
public var kSecAttrProtocolIMAP: CFString { "imap" }
/// `kSecAttrProtocolLDAP` ("ldap").
public var kSecAttrProtocolLDAP: CFString { "ldap" }
/// `kSecAttrProtocolAppleTalk` ("atlk").
public var kSecAttrProtocolAppleTalk: CFString { "atlk" }
/// `kSecAttrProtocolAFP` ("afp ").
public var kSecAttrProtocolAFP: CFString { "afp " }
/// `kSecAttrProtocolTelnet` ("teln").
public var kSecAttrProtocolTelnet: CFString { "teln" }
/// `kSecAttrProtocolSSH` ("ssh ").
public var kSecAttrProtocolSSH: CFString { "ssh " }
/// `kSecAttrProtocolFTPS` ("ftps").
public var kSecAttrProtocolFTPS: CFString { "ftps" }
/// `kSecAttrProtocolHTTPS` ("htps").
public var kSecAttrProtocolHTTPS: CFString { "htps" }
/// `kSecAttrProtocolHTTPProxy` ("htpx").
public var kSecAttrProtocolHTTPProxy: CFString { "htpx" }
/// `kSecAttrProtocolHTTPSProxy` ("htsx").
public var kSecAttrProtocolHTTPSProxy: CFString { "htsx" }
/// `kSecAttrProtocolFTPProxy` ("ftpx").
public var kSecAttrProtocolFTPProxy: CFString { "ftpx" }
/// `kSecAttrProtocolSMB` ("smb ").
public var kSecAttrProtocolSMB: CFString { "smb " }
/// `kSecAttrProtocolRTSP` ("rtsp").
public var kSecAttrProtocolRTSP: CFString { "rtsp" }
/// `kSecAttrProtocolRTSPProxy` ("rtsx").
public var kSecAttrProtocolRTSPProxy: CFString { "rtsx" }
/// `kSecAttrProtocolDAAP` ("daap").
public var kSecAttrProtocolDAAP: CFString { "daap" }
/// `kSecAttrProtocolEPPC` ("eppc").
public var kSecAttrProtocolEPPC: CFString { "eppc" }
/// `kSecAttrProtocolIPP` ("ipp ").
public var kSecAttrProtocolIPP: CFString { "ipp " }
/// `kSecAttrProtocolNNTPS` ("ntps").
public var kSecAttrProtocolNNTPS: CFString { "ntps" }
/// `kSecAttrProtocolLDAPS` ("ldps").
public var kSecAttrProtocolLDAPS: CFString { "ldps" }
/// `kSecAttrProtocolTelnetS` ("tels").
public var kSecAttrProtocolTelnetS: CFString { "tels" }
/// `kSecAttrProtocolIMAPS` ("imps").
public var kSecAttrProtocolIMAPS: CFString { "imps" }
/// `kSecAttrProtocolIRCS` ("ircs").
public var kSecAttrProtocolIRCS: CFString { "ircs" }
/// `kSecAttrProtocolPOP3S` ("pops").
public var kSecAttrProtocolPOP3S: CFString { "pops" }
/// `kSecAttrAuthenticationTypeNTLM` ("ntlm").
public var kSecAttrAuthenticationTypeNTLM: CFString { "ntlm" }
/// `kSecAttrAuthenticationTypeMSN` ("msna").
public var kSecAttrAuthenticationTypeMSN: CFString { "msna" }
/// `kSecAttrAuthenticationTypeDPA` ("dpaa").
public var kSecAttrAuthenticationTypeDPA: CFString { "dpaa" }
/// `kSecAttrAuthenticationTypeRPA` ("rpaa").
public var kSecAttrAuthenticationTypeRPA: CFString { "rpaa" }
/// `kSecAttrAuthenticationTypeHTTPBasic` ("http").
public var kSecAttrAuthenticationTypeHTTPBasic: CFString { "http" }
/// `kSecAttrAuthenticationTypeHTTPDigest` ("httd").
public var kSecAttrAuthenticationTypeHTTPDigest: CFString { "httd" }
/// `kSecAttrAuthenticationTypeHTMLForm` ("form").
public var kSecAttrAuthenticationTypeHTMLForm: CFString { "form" }
/// `kSecAttrAuthenticationTypeDefault` ("dflt").
public var kSecAttrAuthenticationTypeDefault: CFString { "dflt" }

// OSStatus values of the statuses Latchkey returns (Security/SecBase.h).

/// `errSecSuccess` (0).
public var errSecSuccess: OSStatus { 0 }
/// `errSecUnimplemented` (-4).
public var errSecUnimplemented: OSStatus { -4 }
/// `errSecDiskFull` (-34).
public var errSecDiskFull: OSStatus { -34 }
/// `errSecIO` (-36).
public var errSecIO: OSStatus { -36 }
/// `errSecParam` (-50).
public var errSecParam: OSStatus { -50 }
/// `errSecWrPerm` (-61).
public var errSecWrPerm: OSStatus { -61 }
/// `errSecAllocate` (-108).
public var errSecAllocate: OSStatus { -108 }
/// `errSecUserCanceled` (-128).
public var errSecUserCanceled: OSStatus { -128 }
/// `errSecBadReq` (-909).
public var errSecBadReq: OSStatus { -909 }
/// `errSecNotAvailable` (-25291).
public var errSecNotAvailable: OSStatus { -25291 }
/// `errSecReadOnly` (-25292).
public var errSecReadOnly: OSStatus { -25292 }
/// `errSecAuthFailed` (-25293).
public var errSecAuthFailed: OSStatus { -25293 }
/// `errSecNoSuchKeychain` (-25294).
public var errSecNoSuchKeychain: OSStatus { -25294 }
/// `errSecInvalidKeychain` (-25295).
public var errSecInvalidKeychain: OSStatus { -25295 }
/// `errSecDuplicateKeychain` (-25296).
public var errSecDuplicateKeychain: OSStatus { -25296 }
/// `errSecDuplicateItem` (-25299).
public var errSecDuplicateItem: OSStatus { -25299 }
/// `errSecItemNotFound` (-25300).
public var errSecItemNotFound: OSStatus { -25300 }
/// `errSecDataTooLarge` (-25302).
public var errSecDataTooLarge: OSStatus { -25302 }
/// `errSecNoSuchAttr` (-25303).
public var errSecNoSuchAttr: OSStatus { -25303 }
/// `errSecInvalidItemRef` (-25304).
public var errSecInvalidItemRef: OSStatus { -25304 }
/// `errSecNoSuchClass` (-25306).
public var errSecNoSuchClass: OSStatus { -25306 }
/// `errSecNoDefaultKeychain` (-25307).
public var errSecNoDefaultKeychain: OSStatus { -25307 }
/// `errSecInteractionNotAllowed` (-25308).
public var errSecInteractionNotAllowed: OSStatus { -25308 }
/// `errSecDataNotAvailable` (-25316).
public var errSecDataNotAvailable: OSStatus { -25316 }
/// `errSecDecode` (-26275).
public var errSecDecode: OSStatus { -26275 }
/// `errSecInternal` (-26276).
public var errSecInternal: OSStatus { -26276 }
/// `errSecMissingEntitlement` (-34018).
public var errSecMissingEntitlement: OSStatus { -34018 }
