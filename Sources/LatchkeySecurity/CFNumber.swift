public import Foundation

/// `CFNumber`: Foundation's `NSNumber`, as on Apple platforms, where the two are one object.
///
/// Every cast Apple code writes therefore works on every number — those in `SecItemCopyMatching`'s results
/// and those the code made: `value as! CFNumber` then `as! UInt`, `as? Int` or `Int(truncating:)`,
/// `value as? CFNumber` (nil for a string), `2048 as CFNumber`, `nsNumber as CFNumber`. `CFBoolean` is
/// `NSNumber` too; `CFGetTypeID` tells them apart by how the number was made (`CFBooleanGetTypeID()` for one
/// made from a `Bool`, `CFNumberGetTypeID()` for every other).
///
/// One thing Apple code can write does not compile: giving `CFNumber` and `CFBoolean` conformances of their
/// own (`extension CFNumber: P` beside `extension CFBoolean: P`), which now conform `NSNumber` twice. Swift
/// on Linux leaves no type that could be told from `CFBoolean` and still cast like `NSNumber`: the runtime
/// bridges a value type to `UInt` or `Bool` only from a class instance, never from another value type, and
/// the compiler casts an instance of any class but `NSNumber` to `NSNumber` before bridging it — while
/// swift-corelibs-foundation's `NSNumber` cannot be subclassed. Declare such a conformance once, on
/// `NSNumber`, and tell the two apart with `CFGetTypeID`.
public typealias CFNumber = NSNumber

/// `CFBooleanGetValue`: the boolean's value.
public func CFBooleanGetValue(_ boolean: CFBoolean!) -> Bool { boolean?.boolValue ?? false }
