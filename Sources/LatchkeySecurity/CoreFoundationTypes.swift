public import Foundation

// On Apple platforms these are Core Foundation types; on Linux, Swift's Foundation bridges the same way to
// the Foundation classes, so code written against Apple's API — `query as CFDictionary`,
// `kSecClass as String`, `var item: CFTypeRef?`, `item as? Data` — compiles and runs unchanged. Do not also
// import CoreFoundation in the same file: its own declarations would make these names ambiguous.

/// `CFString` (a bridged `NSString`; the `kSec…` constants are `SecConstant`s).
public typealias CFString = NSString
/// `CFDictionary` (a bridged `NSDictionary`).
public typealias CFDictionary = NSDictionary
/// `CFData` (a bridged `NSData`).
public typealias CFData = NSData
/// `CFArray` (a bridged `NSArray`).
public typealias CFArray = NSArray
/// `CFDate` (a bridged `NSDate`).
public typealias CFDate = NSDate
/// `CFSet` (a bridged `NSSet`).
public typealias CFSet = NSSet
/// `CFBoolean`: an `NSNumber` made from a `Bool` (`kCFBooleanTrue`, `kCFBooleanFalse`, `true as CFBoolean`),
/// so that `as? Bool` reads it and `value as! CFBoolean` then `as! Bool` works on any number, as on Apple
/// platforms. `CFNumber` is `NSNumber` too (see there); `CFGetTypeID` tells the two apart.
public typealias CFBoolean = NSNumber
/// `CFTypeRef`.
public typealias CFTypeRef = AnyObject
/// `OSStatus`.
public typealias OSStatus = Int32
/// `CFIndex`.
public typealias CFIndex = Int
/// `CFOptionFlags`.
public typealias CFOptionFlags = UInt
/// `CFError` (bridged to `NSError`, as on Apple platforms).
public typealias CFError = NSError
/// `CFErrorDomain`.
public typealias CFErrorDomain = CFString

/// `kCFBooleanTrue`.
public var kCFBooleanTrue: CFBoolean! { NSNumber(value: true) }
/// `kCFBooleanFalse`.
public var kCFBooleanFalse: CFBoolean! { NSNumber(value: false) }
/// `noErr`.
public var noErr: OSStatus { 0 }

/// `CFAllocator`: Latchkey allocates with Swift, so the allocators are the default one, `nil`, and
/// `kCFAllocatorNull`, which frees nothing.
public final class CFAllocator: Sendable {
    fileprivate init() {}
}

/// `kCFAllocatorDefault`: nil, as on Apple platforms (where it is the NULL allocator).
public var kCFAllocatorDefault: CFAllocator! { nil }

/// `kCFAllocatorNull`: the allocator that frees nothing, for `CFDataCreateWithBytesNoCopy` over bytes the
/// caller keeps.
public let kCFAllocatorNull: CFAllocator! = CFAllocator()

/// `CFErrorGetDomain`: the error's domain (`NSOSStatusErrorDomain` for Security's errors).
public func CFErrorGetDomain(_ error: CFError!) -> CFErrorDomain! { error.map { NSString(string: $0.domain) } }

/// `CFErrorGetCode`: the error's code (an `OSStatus` for Security's errors).
public func CFErrorGetCode(_ error: CFError!) -> CFIndex { error?.code ?? 0 }

/// `CFErrorCopyUserInfo`: the error's user info (an empty dictionary when there is none).
public func CFErrorCopyUserInfo(_ error: CFError!) -> CFDictionary! {
    NSDictionary(dictionary: error?.userInfo ?? [:])
}

/// `CFErrorCopyDescription`: the error's localized description.
public func CFErrorCopyDescription(_ error: CFError!) -> CFString! {
    error.map { NSString(string: $0.localizedDescription) }
}
