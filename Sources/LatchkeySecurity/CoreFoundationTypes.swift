public import Foundation

// On Apple platforms these are Core Foundation types; on Linux, Swift's Foundation bridges the same way to
// the Foundation classes, so code written against Apple's API — `query as CFDictionary`,
// `kSecClass as String`, `var item: CFTypeRef?`, `item as? Data` — compiles and runs unchanged. Do not also
// import CoreFoundation in the same file: its own declarations would make these names ambiguous.

/// `CFString` (a bridged `NSString`).
public typealias CFString = NSString
/// `CFDictionary` (a bridged `NSDictionary`).
public typealias CFDictionary = NSDictionary
/// `CFData` (a bridged `NSData`).
public typealias CFData = NSData
/// `CFArray` (a bridged `NSArray`).
public typealias CFArray = NSArray
/// `CFNumber` (a bridged `NSNumber`).
public typealias CFNumber = NSNumber
/// `CFBoolean` (an `NSNumber` made from a `Bool`).
public typealias CFBoolean = NSNumber
/// `CFTypeRef`.
public typealias CFTypeRef = AnyObject
/// `OSStatus`.
public typealias OSStatus = Int32

/// `kCFBooleanTrue`.
public var kCFBooleanTrue: CFBoolean! { NSNumber(value: true) }
/// `kCFBooleanFalse`.
public var kCFBooleanFalse: CFBoolean! { NSNumber(value: false) }
/// `noErr`.
public var noErr: OSStatus { 0 }
