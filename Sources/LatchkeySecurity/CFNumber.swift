public import Foundation

/// `CFNumber`: a number, as Core Foundation's type on Apple platforms — a value that bridges to `NSNumber`.
///
/// On Linux `CFBoolean` has to be `NSNumber` itself (only an `NSNumber` is read by `as? Bool`, and
/// swift-corelibs-foundation's `NSNumber` cannot be subclassed outside Foundation), so `CFNumber` cannot be
/// `NSNumber` too: code that gives `CFNumber` and `CFBoolean` conformances of their own (`extension CFNumber:
/// CFType { static let typeID = CFNumberGetTypeID() }`) would declare the same conformance twice. It is this
/// value instead: `x as? CFNumber` and `x as! CFNumber` take any `NSNumber` (results, attributes), `256 as
/// CFNumber` and `NSNumber(value: 8) as CFNumber`... are written with a literal or `CFNumber(number)`, and in
/// a dictionary it becomes its `NSNumber`.
///
/// ```swift
/// let parameters = [kSecAttrKeyType: kSecAttrKeyTypeRSA, kSecAttrKeySizeInBits: 2048 as CFNumber] as CFDictionary
/// ```
public struct CFNumber: Hashable, @unchecked Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, _ObjectiveCBridgeable
{
    // @unchecked: the one stored NSNumber is immutable.
    /// The number.
    public let number: NSNumber

    /// The `CFNumber` of an `NSNumber`.
    public init(_ number: NSNumber) { self.number = number }
    /// A `CFNumber` from an integer literal.
    public init(integerLiteral value: Int) { self.number = NSNumber(value: value) }
    /// A `CFNumber` from a floating-point literal.
    public init(floatLiteral value: Double) { self.number = NSNumber(value: value) }

    /// The number's description ("2048").
    public var description: String { number.description }

    /// The `NSNumber` (what a dictionary or `as AnyObject` holds).
    public func _bridgeToObjectiveC() -> NSNumber { number }

    /// Any `NSNumber` is a `CFNumber` (as a CF cast on Apple platforms always succeeds).
    public static func _forceBridgeFromObjectiveC(_ source: NSNumber, result: inout CFNumber?) {
        result = CFNumber(source)
    }

    /// Any `NSNumber` is a `CFNumber`.
    public static func _conditionallyBridgeFromObjectiveC(_ source: NSNumber, result: inout CFNumber?) -> Bool {
        result = CFNumber(source)
        return true
    }

    /// The `CFNumber` of an `NSNumber` (zero for nil).
    public static func _unconditionallyBridgeFromObjectiveC(_ source: NSNumber?) -> CFNumber {
        CFNumber(source ?? NSNumber(value: 0))
    }
}

/// `CFBooleanGetValue`: the boolean's value.
public func CFBooleanGetValue(_ boolean: CFBoolean!) -> Bool { boolean?.boolValue ?? false }
