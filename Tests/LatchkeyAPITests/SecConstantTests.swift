import Foundation
import LatchkeySecurity
import Testing

/// The `kSec…` constants behave as Apple's bridged `CFString`s: they hash and compare as the Swift strings
/// they hold, so lookups by constant find `String` keys and dictionaries built from either are equal.
@Suite(.dedicatedThreads) struct SecConstantTests {
    @Test func aConstantHashesAsItsText() {
        #expect(AnyHashable(kSecAttrAccount) == AnyHashable("acct"))
        #expect(AnyHashable(kSecAttrAccount).hashValue == AnyHashable("acct").hashValue)
        #expect(kSecClass as String == "class")
        #expect(kSecAttrAccount.isEqual(to: "acct"))
        #expect(kSecAttrAccount.length == 4)
    }

    @Test func aResultIsReadByConstant() {
        // As SwiftKeychainWrapper reads attributes: [AnyHashable: Any] with String keys, looked up by constant.
        let result: [AnyHashable: Any] = ["acct": "alice", "svce": "mail"]
        #expect(result[kSecAttrAccount] as? String == "alice")
        let keyed: [AnyHashable: Any] = [kSecAttrService: "mail"]
        #expect(keyed["svce"] as? String == "mail")
    }

    @Test func dictionariesOfConstantsEqualDictionariesOfStrings() {
        // As SimpleKeychain compares queries.
        let built = NSDictionary(dictionary: [kSecClass: kSecClassGenericPassword, kSecAttrService: "s"])
        #expect(built.isEqual(to: ["class": "genp", "svce": "s"]))
        #expect(NSDictionary(dictionary: ["class": "genp"]).isEqual(to: [kSecClass: kSecClassGenericPassword]))
    }
}
