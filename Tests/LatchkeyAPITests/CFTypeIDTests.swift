import Foundation
import LatchkeySecurity
import Testing

/// A wrapper on `CFGetTypeID` as ported code writes one (the "CFCastable" pattern): each CF type states its
/// type identifier, and a value is cast only when its identifier is that one. `CFNumber` and `CFBoolean` are
/// both `NSNumber` on Linux (so that every cast from and to them works as on Apple platforms), so they cannot
/// be given a conformance each: code that declares both does not compile, and tells them apart with
/// `CFGetTypeID` instead (`describe` below).
protocol CFCastable {
    static var typeID: CFTypeID { get }
}
extension CFString: CFCastable { static var typeID: CFTypeID { CFStringGetTypeID() } }
extension CFData: CFCastable { static var typeID: CFTypeID { CFDataGetTypeID() } }
extension CFDate: CFCastable { static var typeID: CFTypeID { CFDateGetTypeID() } }
extension CFDictionary: CFCastable { static var typeID: CFTypeID { CFDictionaryGetTypeID() } }
extension CFArray: CFCastable { static var typeID: CFTypeID { CFArrayGetTypeID() } }
extension CFSet: CFCastable { static var typeID: CFTypeID { CFSetGetTypeID() } }
extension SecKey: CFCastable { static var typeID: CFTypeID { SecKeyGetTypeID() } }
extension SecCertificate: CFCastable { static var typeID: CFTypeID { SecCertificateGetTypeID() } }

func cfCast<T: CFCastable>(_ value: Any, to type: T.Type = T.self) -> T? {
    guard CFGetTypeID(value as CFTypeRef) == T.typeID else { return nil }
    return (value as! T)
}

/// The Core Foundation type system as code uses it on Apple platforms: `CFGetTypeID` and the
/// `…GetTypeID()` functions, `CFSet`, the CFData functions and `kCFAllocatorNull`.
@Suite struct CFTypeIDTests {
    /// CFBoolean and CFNumber are different CF types (`CFNumber.h` declares `CFBooleanGetTypeID` and
    /// `CFNumberGetTypeID` apart), and Apple's own code relies on it: securityd's `query_add_return` refuses
    /// a `kSecReturn…` value whose `CFGetTypeID` is not `CFBooleanGetTypeID()`, and `query_add_match` reads
    /// a numeric match limit only when it is `CFNumberGetTypeID()`. On Linux both are NSNumber; the boolean
    /// ones are told by their class.
    @Test func booleansAndNumbersAreTwoTypes() {
        #expect(CFGetTypeID(kCFBooleanTrue) == CFBooleanGetTypeID())
        #expect(CFGetTypeID(kCFBooleanFalse) == CFBooleanGetTypeID())
        #expect(CFBooleanGetTypeID() != CFNumberGetTypeID())
        #expect(CFGetTypeID(NSNumber(value: true)) == CFBooleanGetTypeID())
        #expect(CFGetTypeID(true as AnyObject) == CFBooleanGetTypeID())
        #expect(CFGetTypeID(true as CFBoolean) == CFBooleanGetTypeID())
        for number in [
            NSNumber(value: 1), NSNumber(value: 0), NSNumber(value: Int8(1)), NSNumber(value: 2.5), 7 as AnyObject,
        ] {
            #expect(CFGetTypeID(number) == CFNumberGetTypeID())
        }
        #expect(CFGetTypeID(2048 as CFNumber) == CFNumberGetTypeID())
        #expect(CFBooleanGetValue(kCFBooleanTrue) && !CFBooleanGetValue(kCFBooleanFalse))
        // A CFBoolean still reads as a Bool, as code inspecting its own queries expects.
        let query: [String: Any] = [kSecReturnData as String: kCFBooleanTrue!]
        #expect(query[kSecReturnData as String] as? Bool == true)
    }

    /// Each CF and Security type has its own identifier, and `CFGetTypeID` gives it for every value of the
    /// type, mutable and bridged ones included (a CF type's identifier is the same for its mutable variant,
    /// `CFBase.h`).
    @Test func everyTypeHasItsIdentifier() throws {
        var error: Unmanaged<CFError>?
        let key = try #require(
            SecKeyCreateRandomKey(
                [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits: 256] as CFDictionary, &error))
        let control = try #require(
            SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .userPresence, nil))
        let policy = SecPolicyCreateBasicX509()
        let cases: [(AnyObject, CFTypeID)] = [
            ("text" as NSString, CFStringGetTypeID()), (NSMutableString(string: "x"), CFStringGetTypeID()),
            (kSecClass, CFStringGetTypeID()), ("bridged" as AnyObject, CFStringGetTypeID()),
            (NSData(), CFDataGetTypeID()), (Data([1]) as AnyObject, CFDataGetTypeID()),
            (NSMutableData(), CFDataGetTypeID()),
            (NSDate(), CFDateGetTypeID()), (NSDictionary(), CFDictionaryGetTypeID()),
            (["a": 1] as AnyObject, CFDictionaryGetTypeID()),
            (NSArray(), CFArrayGetTypeID()), ([1, 2] as AnyObject, CFArrayGetTypeID()), (NSSet(), CFSetGetTypeID()),
            (NSNull(), CFNullGetTypeID()), (NSError(domain: NSOSStatusErrorDomain, code: -50), CFErrorGetTypeID()),
            (key, SecKeyGetTypeID()), (control, SecAccessControlGetTypeID()), (policy, SecPolicyGetTypeID()),
        ]
        for (value, identifier) in cases {
            #expect(CFGetTypeID(value) == identifier, "\(type(of: value))")
        }
        let identifiers = [
            CFStringGetTypeID(), CFNumberGetTypeID(), CFBooleanGetTypeID(), CFDataGetTypeID(), CFDateGetTypeID(),
            CFDictionaryGetTypeID(), CFArrayGetTypeID(), CFSetGetTypeID(), SecKeyGetTypeID(), SecCertificateGetTypeID(),
            SecIdentityGetTypeID(), SecTrustGetTypeID(), SecPolicyGetTypeID(), SecAccessControlGetTypeID(),
        ]
        #expect(Set(identifiers).count == identifiers.count)
        // Something that is no CF type: Core Foundation's "not a type" (0).
        final class Plain {}
        #expect(CFGetTypeID(Plain()) == 0)
    }

    /// An unknown CF value read the way Apple code reads one: switch on its type identifier, then cast.
    func describe(_ value: Any) -> String {
        let cf = value as AnyObject
        switch CFGetTypeID(cf) {
        case CFStringGetTypeID(): return "string \(cf as! CFString)"
        case CFBooleanGetTypeID(): return "boolean \(CFBooleanGetValue((cf as! CFBoolean)))"
        case CFNumberGetTypeID(): return "number \((cf as! CFNumber) as! Int)"
        default: return "other"
        }
    }

    /// The CFCastable wrapper works as on Apple platforms: a value is cast to the type its identifier names,
    /// to no other; numbers and booleans are told apart by their identifiers.
    @Test func aTypeIDWrapperCastsByIdentifier() throws {
        let values: [String: Any] = ["s": "x", "n": 5, "b": true, "d": Data([1]), "a": [1], "k": kCFBooleanFalse!]
        let dictionary = values as NSDictionary
        #expect(cfCast(dictionary["s"]!, to: CFString.self) == "x")
        #expect(describe(dictionary["s"]!) == "string x")
        #expect(describe(dictionary["n"]!) == "number 5")
        #expect(describe(dictionary["b"]!) == "boolean true")
        #expect(describe(dictionary["k"]!) == "boolean false")
        #expect(describe(dictionary["d"]!) == "other")
        #expect(cfCast(dictionary["d"]!, to: CFData.self)?.length == 1)
        #expect(cfCast(dictionary["a"]!, to: CFArray.self)?.count == 1)
        #expect(cfCast(dictionary["a"]!, to: CFDictionary.self) == nil)
        // A CFNumber goes into a dictionary as its NSNumber.
        let parameters = [kSecAttrKeySizeInBits as String: 2048 as CFNumber] as NSDictionary
        #expect(parameters[kSecAttrKeySizeInBits as String] as? Int == 2048)
    }

    /// `CFDataCreate` copies the bytes; `CFDataCreateWithBytesNoCopy` with `kCFAllocatorNull` does not and
    /// never frees them — as SecKey.c's `SecKeyPerformLegacyOperation` wraps the caller's buffers
    /// (`CFDataCreateWithBytesNoCopy(NULL, in1Ptr, in1Len, kCFAllocatorNull)`).
    @Test func cfDataFunctions() {
        var bytes: [UInt8] = [1, 2, 3, 4]
        bytes.withUnsafeMutableBufferPointer { buffer in
            let base = UnsafePointer(buffer.baseAddress!)
            let copied = CFDataCreate(kCFAllocatorDefault, base, 4)
            let borrowed = CFDataCreateWithBytesNoCopy(nil, base, 4, kCFAllocatorNull)
            #expect(CFDataGetLength(copied) == 4 && CFDataGetLength(borrowed) == 4)
            #expect(CFDataGetBytePtr(borrowed) == base)
            #expect(CFDataGetBytePtr(copied) != base)
            buffer[0] = 9
            #expect(CFDataGetBytePtr(borrowed)[0] == 9)
            #expect(CFDataGetBytePtr(copied)[0] == 1)
        }
        // With the default deallocator the data owns malloc'd bytes and frees them when it goes.
        let owned = malloc(3)!.assumingMemoryBound(to: UInt8.self)
        owned.initialize(repeating: 7, count: 3)
        let data = Data(referencing: CFDataCreateWithBytesNoCopy(nil, owned, 3, kCFAllocatorDefault))
        #expect(data == Data([7, 7, 7]))
        #expect(CFDataGetLength(CFDataCreate(nil, nil, 0)) == 0)
        #expect(CFGetTypeID(kCFAllocatorNull) == CFAllocatorGetTypeID())
        let set: CFSet = NSSet(array: [1, 2])
        #expect(set.count == 2)
    }
}
