internal import Foundation
internal import Security
import Testing

/// Swift 6's access-level imports, as code written for Apple's Security uses them (this target builds with
/// `InternalImportsByDefault`, and its files import Security `internal`ly, `private`ly and `public`ly).
///
/// Apple's fact: the Core Foundation names — `CFTypeRef`, `CFIndex`, `CFTypeID`, `CFString`, `kCFBooleanTrue`
/// (`CFBase.h`, `CFNumber.h`) — belong to CoreFoundation, and `OSStatus` to Darwin's MacTypes; everything
/// else here (`SecKey`, `kSec…`, `errSec…`, `SecItem…`) to Security, usable at the level of Security's
/// import. On Linux Foundation has no CF names, they come with `Security`, and take its import's level too:
/// no package can add them to Foundation (docs/LATCHKEY-SECURITY.md).
@Suite struct AccessLevelImportTests {
    /// Internal code with `internal import Security` uses the types, `OSStatus` and the constants as with
    /// Apple's Security.
    @Test func anInternalImportServesInternalCode() throws {
        let store = InternalKeyStore()
        #expect(store.status == errSecSuccess)
        let query = store.query(tag: "t")
        #expect(query.count == 3)
        let key = try #require(store.makeKey())
        #expect(CFGetTypeID(key) == SecKeyGetTypeID())
        #expect(store.typeOf(kCFBooleanTrue) == CFBooleanGetTypeID())
    }

    /// A file with `private import Security` uses them in its private declarations; its internal API speaks
    /// Swift types (`PrivateImportUse.swift`).
    @Test func aPrivateImportServesItsFile() {
        #expect(privatelyImportedStatusMessage(-25300) == "The specified item could not be found in the keychain.")
        #expect(privatelyImportedQueryCount() == 2)
    }

    /// A file with `public import Security` names them in public API (`PublicImportUse.swift`).
    @Test func aPublicImportServesPublicAPI() {
        #expect(PublicStatus(errSecItemNotFound).status == -25300)
        #expect(PublicStatus.classKey as String == "keys")
    }
}

struct InternalKeyStore {
    var status: OSStatus = noErr
    func query(tag: String) -> CFDictionary {
        [kSecClass: kSecClassKey, kSecAttrApplicationTag: Data(tag.utf8), kSecReturnRef: kCFBooleanTrue!]
            as CFDictionary
    }
    func makeKey() -> SecKey? {
        var error: Unmanaged<CFError>?
        return SecKeyCreateRandomKey(
            [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits: 256 as CFNumber] as CFDictionary,
            &error)
    }
    func typeOf(_ value: CFTypeRef) -> CFTypeID { CFGetTypeID(value) }
}
