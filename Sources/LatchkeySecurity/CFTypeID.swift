import Foundation

// Core Foundation's type identifiers, as code tells CF objects apart: `CFGetTypeID(value) ==
// SecKeyGetTypeID()` before `value as! SecKey`. The CF values are the fixed runtime IDs of Core Foundation
// (CFRuntime_Internal.h); Security's types, which Apple registers at run time, have values of their own.

/// `CFTypeID`.
public typealias CFTypeID = UInt

/// The type identifiers, by type.
private enum TypeIdentifier {
    static let notAType: CFTypeID = 0
    static let allocator: CFTypeID = 2
    static let string: CFTypeID = 7
    static let null: CFTypeID = 16
    static let set: CFTypeID = 17
    static let dictionary: CFTypeID = 18
    static let array: CFTypeID = 19
    static let data: CFTypeID = 20
    static let boolean: CFTypeID = 21
    static let number: CFTypeID = 22
    static let error: CFTypeID = 27
    static let date: CFTypeID = 42
    static let certificate: CFTypeID = 300
    static let identity: CFTypeID = 301
    static let key: CFTypeID = 302
    static let policy: CFTypeID = 303
    static let trust: CFTypeID = 304
    static let accessControl: CFTypeID = 305
}

/// The class swift-corelibs-foundation gives an `NSNumber` made from a `Bool` (its `__NSCFBoolean`, Apple's
/// CFBoolean), told from the class of every other number.
private let booleanClass = ObjectIdentifier(type(of: NSNumber(value: true)))

/// `CFGetTypeID`: the type identifier of a CF object — equal to `CFStringGetTypeID()` for any string,
/// `CFBooleanGetTypeID()` for `kCFBooleanTrue`/`kCFBooleanFalse` and every `NSNumber` made from a `Bool`,
/// `CFNumberGetTypeID()` for other numbers, `SecKeyGetTypeID()` for a `SecKey`, and so on; 0 (Core
/// Foundation's "not a type") for an object that is none of them, or nil.
public func CFGetTypeID(_ cf: CFTypeRef!) -> CFTypeID {
    switch cf {
    case nil: TypeIdentifier.notAType
    case let number as NSNumber:
        ObjectIdentifier(type(of: number)) == booleanClass ? TypeIdentifier.boolean : TypeIdentifier.number
    case is NSString: TypeIdentifier.string
    case is NSData: TypeIdentifier.data
    case is NSDate: TypeIdentifier.date
    case is NSDictionary: TypeIdentifier.dictionary
    case is NSArray: TypeIdentifier.array
    case is NSSet: TypeIdentifier.set
    case is NSNull: TypeIdentifier.null
    case is NSError: TypeIdentifier.error
    case is CFAllocator: TypeIdentifier.allocator
    case is SecKey: TypeIdentifier.key
    case is SecCertificate: TypeIdentifier.certificate
    case is SecIdentity: TypeIdentifier.identity
    case is SecTrust: TypeIdentifier.trust
    case is SecPolicy: TypeIdentifier.policy
    case is SecAccessControl: TypeIdentifier.accessControl
    default: TypeIdentifier.notAType
    }
}

/// `CFStringGetTypeID`.
public func CFStringGetTypeID() -> CFTypeID { TypeIdentifier.string }
/// `CFNumberGetTypeID`.
public func CFNumberGetTypeID() -> CFTypeID { TypeIdentifier.number }
/// `CFBooleanGetTypeID`: differs from `CFNumberGetTypeID()`, as on Apple platforms, though `CFBoolean` and
/// `CFNumber` are both `NSNumber`: `CFGetTypeID` gives it for a number made from a `Bool`.
public func CFBooleanGetTypeID() -> CFTypeID { TypeIdentifier.boolean }
/// `CFDataGetTypeID`.
public func CFDataGetTypeID() -> CFTypeID { TypeIdentifier.data }
/// `CFDateGetTypeID`.
public func CFDateGetTypeID() -> CFTypeID { TypeIdentifier.date }
/// `CFDictionaryGetTypeID`.
public func CFDictionaryGetTypeID() -> CFTypeID { TypeIdentifier.dictionary }
/// `CFArrayGetTypeID`.
public func CFArrayGetTypeID() -> CFTypeID { TypeIdentifier.array }
/// `CFSetGetTypeID`.
public func CFSetGetTypeID() -> CFTypeID { TypeIdentifier.set }
/// `CFNullGetTypeID`.
public func CFNullGetTypeID() -> CFTypeID { TypeIdentifier.null }
/// `CFErrorGetTypeID`.
public func CFErrorGetTypeID() -> CFTypeID { TypeIdentifier.error }
/// `CFAllocatorGetTypeID`.
public func CFAllocatorGetTypeID() -> CFTypeID { TypeIdentifier.allocator }
/// `SecKeyGetTypeID`.
public func SecKeyGetTypeID() -> CFTypeID { TypeIdentifier.key }
/// `SecCertificateGetTypeID`.
public func SecCertificateGetTypeID() -> CFTypeID { TypeIdentifier.certificate }
/// `SecIdentityGetTypeID`.
public func SecIdentityGetTypeID() -> CFTypeID { TypeIdentifier.identity }
/// `SecTrustGetTypeID`.
public func SecTrustGetTypeID() -> CFTypeID { TypeIdentifier.trust }
/// `SecPolicyGetTypeID`.
public func SecPolicyGetTypeID() -> CFTypeID { TypeIdentifier.policy }
/// `SecAccessControlGetTypeID`.
public func SecAccessControlGetTypeID() -> CFTypeID { TypeIdentifier.accessControl }
