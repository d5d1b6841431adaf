import Foundation
import LatchkeySecurity
import Testing

/// The Core Foundation names Apple-written keychain code uses, with Apple's meaning.
@Suite(.dedicatedThreads) struct CoreFoundationShimTests {
    @Test func errorsAreReadAsOnApplePlatforms() {
        var error: Unmanaged<CFError>?
        let control = SecAccessControlCreateWithFlags(
            kCFAllocatorDefault, "no such class" as CFTypeRef, .userPresence, &error)
        #expect(control == nil)
        let failure = error?.takeRetainedValue()
        #expect(CFErrorGetCode(failure) == CFIndex(errSecParam))
        #expect(CFErrorGetDomain(failure) as String? == NSOSStatusErrorDomain)
        #expect(
            (CFErrorCopyUserInfo(failure) as? [String: Any])?["NSDescription"] as? String
                == "the protection must be one of the kSecAttrAccessible constants")
        #expect(
            CFErrorCopyDescription(failure) as String?
                == "The operation couldn’t be completed. (OSStatus error -50 - "
                + "the protection must be one of the kSecAttrAccessible constants)")
        #expect(CFErrorGetCode(nil) == 0)
    }

    @Test func theTypesAreApples() {
        #expect(kCFAllocatorDefault == nil)
        let flags: CFOptionFlags = SecAccessControlCreateFlags.userPresence.rawValue
        #expect(flags == 1)
        let index: CFIndex = 3
        #expect(index == 3)
        #expect(kCFBooleanTrue == true && kCFBooleanFalse == false)
    }

    @Test func randomBytesComeFromTheSystem() {
        var first = [UInt8](repeating: 0, count: 32)
        var second = [UInt8](repeating: 0, count: 32)
        #expect(SecRandomCopyBytes(kSecRandomDefault, first.count, &first) == errSecSuccess)
        #expect(SecRandomCopyBytes(nil, second.count, &second) == errSecSuccess)
        #expect(first != second)
        #expect(first != [UInt8](repeating: 0, count: 32))
        var none: [UInt8] = [7]
        #expect(SecRandomCopyBytes(kSecRandomDefault, 0, &none) == errSecSuccess)
        #expect(none == [7])
        #expect(SecRandomCopyBytes(kSecRandomDefault, -1, &none) == errSecParam)
    }
}
