public import Foundation

// Core Foundation's Info.plist keys (CFBundle.h), which code beside Security reads a bundle's settings with —
// `Bundle.main.infoDictionary?[kCFBundleIdentifierKey as String]` for a keychain service's default name.
// swift-corelibs-foundation keeps them inside its own Core Foundation (declared there, but not exported:
// `import CoreFoundation` compiles a reference to them that does not link), so they are here, with Apple's
// values, as `SecConstant`s: `as String` gives the key, and `AnyHashable(kCFBundleIdentifierKey)` equals
// `AnyHashable("CFBundleIdentifier")` as a bridged `CFString` does.

/// `kCFBundleInfoDictionaryVersionKey` ("CFBundleInfoDictionaryVersion").
public var kCFBundleInfoDictionaryVersionKey: CFString! { SecConstant("CFBundleInfoDictionaryVersion") }
/// `kCFBundleExecutableKey` ("CFBundleExecutable").
public var kCFBundleExecutableKey: CFString! { SecConstant("CFBundleExecutable") }
/// `kCFBundleIdentifierKey` ("CFBundleIdentifier").
public var kCFBundleIdentifierKey: CFString! { SecConstant("CFBundleIdentifier") }
/// `kCFBundleVersionKey` ("CFBundleVersion").
public var kCFBundleVersionKey: CFString! { SecConstant("CFBundleVersion") }
/// `kCFBundleDevelopmentRegionKey` ("CFBundleDevelopmentRegion").
public var kCFBundleDevelopmentRegionKey: CFString! { SecConstant("CFBundleDevelopmentRegion") }
/// `kCFBundleNameKey` ("CFBundleName").
public var kCFBundleNameKey: CFString! { SecConstant("CFBundleName") }
/// `kCFBundleLocalizationsKey` ("CFBundleLocalizations").
public var kCFBundleLocalizationsKey: CFString! { SecConstant("CFBundleLocalizations") }
