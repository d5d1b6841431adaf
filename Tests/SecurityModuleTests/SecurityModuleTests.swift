import Foundation
import Security
import Testing

/// `import Security` on Linux: the `Security` product re-exports LatchkeySecurity, so a package that keeps
/// Apple's import line (depending on the product only on Linux) compiles unchanged.
@Suite struct SecurityModuleTests {
    @Test func applesNamesResolve() throws {
        let control = try #require(
            SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked, .userPresence, nil))
        #expect(SecAccessControlGetFlags(control) == .userPresence)
        #expect(kSecClassGenericPassword as String == "genp")
        #expect(errSecItemNotFound == -25300)
        #expect(
            SecCopyErrorMessageString(errSecItemNotFound, nil) as String?
                == "The specified item could not be found in the keychain.")
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword, kSecReturnData as String: kCFBooleanTrue!,
        ]
        #expect((query as CFDictionary).count == 2)
    }

    /// The Core Foundation names Apple code uses beside Security come with it, as CoreFoundation comes with
    /// Apple's Security: a number read as `CFNumber` and converted, a bundle's identifier read by its key.
    @Test func coreFoundationNamesComeWithIt() {
        let values: [String: Any] = ["creator": NSNumber(value: 0x6143_7274), "flag": true]
        #expect(values["creator"] as! CFNumber as! UInt == 0x6143_7274)
        #expect(values["flag"] as! CFBoolean as! Bool)
        #expect(kCFBundleIdentifierKey as String == "CFBundleIdentifier")
        #expect(
            Bundle.main.infoDictionary?[kCFBundleIdentifierKey as String] as? String == Bundle.main.bundleIdentifier)
    }
}
