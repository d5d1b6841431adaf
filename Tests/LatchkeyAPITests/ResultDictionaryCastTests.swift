import Foundation
import LatchkeySecurity
import LatchkeyTesting
import Testing

extension GlobalSecItemTests {
    /// Apple code reads attribute values out of a result dictionary as Core Foundation types and converts them:
    /// `value as! CFNumber` then `as! UInt`, `value as! CFBoolean` then `as! Bool`, `value as? CFNumber` to test.
    /// On Apple platforms CFNumber, CFBoolean and NSNumber are one object, so every such cast works; on Linux
    /// they are all `NSNumber`, for the same reason. Each form on values `SecItemCopyMatching` and
    /// `SecKeyCopyAttributes` returned, and on values the code made.
    @Suite(.dedicatedThreads) struct ResultDictionaryCastTests {
        init() { InMemoryKeychain().install() }

        /// 'aCrt' and 'aTyp', the four-character codes Apple's documentation gives as examples.
        static let creator: UInt32 = 0x6143_7274
        static let type: UInt32 = 0x6154_7970

        /// A generic password with a creator, a type and two flags, read back with its attributes.
        func storedAttributes() throws -> [String: Any] {
            let add: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "casts",
                kSecAttrAccount as String: "alice", kSecValueData as String: Data("pw".utf8),
                kSecAttrCreator as String: Self.creator, kSecAttrType as String: Self.type,
                kSecAttrIsInvisible as String: true, kSecAttrIsNegative as String: false,
            ]
            #expect(SecItemAdd(add as CFDictionary, nil) == errSecSuccess)
            var result: CFTypeRef?
            let search: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "casts",
                kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitOne,
            ]
            #expect(SecItemCopyMatching(search as CFDictionary, &result) == errSecSuccess)
            return try #require(result as? [String: Any])
        }

        /// `dict[kSecAttrCreator as String] as! CFNumber`, then `as! UInt` (and the other conversions Apple code
        /// writes after it), on the numbers `SecItemCopyMatching` returned.
        @Test func resultNumbersCastToCFNumberThenToIntegers() throws {
            let attributes = try storedAttributes()
            #expect((attributes[kSecAttrCreator as String] as? CFNumber) as? UInt == UInt(Self.creator))
            let creator = attributes[kSecAttrCreator as String] as! CFNumber
            #expect(creator as! UInt == UInt(Self.creator))
            #expect(attributes[kSecAttrType as String] as! CFNumber as! UInt == UInt(Self.type))
            #expect(creator as? UInt32 == Self.creator)
            #expect(creator as? Int == Int(Self.creator))
            #expect(UInt32(truncating: creator) == Self.creator)
            #expect((creator as NSNumber).uint32Value == Self.creator)
            #expect(CFGetTypeID(creator) == CFNumberGetTypeID())
            // The same through NSDictionary and [AnyHashable: Any], as Objective-C-minded code reads results.
            let dictionary = attributes as NSDictionary
            #expect(dictionary[kSecAttrCreator as String] as! CFNumber as! UInt == UInt(Self.creator))
            let hashable = dictionary as! [AnyHashable: Any]
            #expect(hashable[kSecAttrType] as! CFNumber as! UInt == UInt(Self.type))
        }

        /// `as? CFNumber` as a test: it holds for a number and for nothing else in the result.
        @Test func asCFNumberTestsForANumber() throws {
            let attributes = try storedAttributes()
            #expect(attributes[kSecAttrCreator as String] as? CFNumber != nil)
            for key in [kSecAttrAccount, kSecAttrService, kSecAttrCreationDate, kSecAttrAccessible] {
                #expect(attributes[key as String] != nil)
                #expect(attributes[key as String] as? CFNumber == nil, "\(key)")
            }
        }

        /// `as! CFBoolean`, then `as! Bool`, on the flags `SecItemCopyMatching` returned (numbers, as Apple's
        /// keychain returns them: `CFGetTypeID` says CFNumber, as there) and on the booleans of
        /// `SecKeyCopyAttributes` (CFBooleans, as Apple's `SecKeyCopyAttributes` returns them).
        @Test func flagsCastToCFBooleanThenToBool() throws {
            let attributes = try storedAttributes()
            #expect((attributes[kSecAttrIsInvisible as String] as? CFBoolean) as? Bool == true)
            #expect(attributes[kSecAttrIsInvisible as String] as! CFBoolean as! Bool == true)
            #expect(attributes[kSecAttrIsNegative as String] as! CFBoolean as! Bool == false)
            #expect(CFGetTypeID(attributes[kSecAttrIsInvisible as String] as! CFBoolean) == CFNumberGetTypeID())

            var error: Unmanaged<CFError>?
            let key = try #require(
                SecKeyCreateRandomKey(
                    [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits: 256] as CFDictionary,
                    &error))
            let keyAttributes = try #require(SecKeyCopyAttributes(key) as? [String: Any])
            let canSign = keyAttributes[kSecAttrCanSign as String] as! CFBoolean
            #expect(canSign as! Bool == true)
            #expect(CFBooleanGetValue(canSign))
            #expect(CFGetTypeID(canSign) == CFBooleanGetTypeID())
            #expect(keyAttributes[kSecAttrKeySizeInBits as String] as! CFNumber as! Int == 256)
            #expect(CFGetTypeID(keyAttributes[kSecAttrKeySizeInBits as String] as! CFNumber) == CFNumberGetTypeID())
        }

        /// The same forms on values the code made itself: Foundation's numbers, Swift's bridged ones, the
        /// `kCFBoolean…` constants and literals.
        @Test func valuesMadeInCodeCastTheSameWay() {
            let values: [String: Any] = [
                "made": NSNumber(value: 7), "bridged": 8, "literal": 2048 as CFNumber, "flag": true,
                "constant": kCFBooleanTrue!, "text": "8",
            ]
            #expect(values["made"] as! CFNumber as! UInt == 7)
            #expect(values["bridged"] as! CFNumber as! Int == 8)
            #expect(values["literal"] as! CFNumber as! Int == 2048)
            #expect(values["flag"] as! CFBoolean as! Bool == true)
            #expect(values["constant"] as! CFBoolean as! Bool == true)
            #expect(values["text"] as? CFNumber == nil)
            #expect(NSNumber(value: 9) as CFNumber == 9)
            #expect(CFGetTypeID(values["flag"] as AnyObject) == CFBooleanGetTypeID())
            #expect(CFGetTypeID(values["made"] as AnyObject) == CFNumberGetTypeID())
        }
    }
}
