import FoundationEssentials

/// A number as Foundation's `NSNumber` holds one (Apple's CFNumber and CFBoolean): what the dictionary layer
/// reads of it. The dictionary layer does not import Foundation — that would link swift-corelibs-foundation
/// into every program built on Latchkey, the `latchkey` tool among them (docs/DESIGN-NOTES.md, "The CLI's
/// start") — so `NSNumber` is given this conformance in `LatchkeyFoundationValues`, which the `Latchkey` and
/// `LatchkeySecurity` products link.
package protocol DictionaryNumber {
    /// The number, by the kind of value it was made from (its `objCType`).
    var dictionaryNumber: DictionaryNumberValue { get }
}

/// What a `DictionaryNumber` holds.
package enum DictionaryNumberValue: Equatable, Sendable {
    /// Made from a boolean (`objCType` "c" or "B"): CFBoolean.
    case boolean(Bool)
    /// A signed integer.
    case integer(Int64)
    /// An unsigned integer (`objCType` "Q", "L" or "I").
    case unsigned(UInt64)
    /// A floating-point number (`objCType` "f" or "d").
    case floating(Double)
}

/// Foundation's `NSNull` (Apple's kCFNull), conformed in `LatchkeyFoundationValues` as `DictionaryNumber` is.
package protocol DictionaryNull {}

/// Converts the values found in Apple-style dictionaries (Swift or Foundation types) into typed values.
package enum DictionaryValue {
    /// A Swift `Bool`, or an `NSNumber` made from one (`objCType` "c" or "B"): Apple's CFBoolean.
    package static func boolean(_ value: Any) -> Bool? {
        if let flag = value as? Bool, type(of: value) == Bool.self { return flag }
        if case .boolean(let flag) = (value as? any DictionaryNumber)?.dictionaryNumber { return flag }
        return nil
    }

    /// An integer (any Swift integer type, an integral Swift floating-point number, or an integral
    /// `NSNumber`), not a boolean.
    static func integer(_ value: Any) -> Int64? {
        guard boolean(value) == nil, !(value is String) else { return nil }
        switch (value as? any DictionaryNumber)?.dictionaryNumber {
        case .integer(let number): return number
        case .unsigned(let number): return Int64(exactly: number)
        case .floating(let number): return integral(number)
        case .boolean: return nil
        case nil: break
        }
        if let number = value as? any BinaryInteger { return Int64(exactly: number) }
        if let number = value as? Double { return integral(number) }
        if let number = value as? Float { return integral(Double(number)) }
        return nil
    }

    /// Whether `value` is null: `NSNull` (kCFNull).
    static func isNull(_ value: Any) -> Bool { value is any DictionaryNull }

    private static func integral(_ number: Double) -> Int64? {
        guard number.rounded() == number else { return nil }
        return Int64(exactly: number)
    }

    /// The attribute value for a dictionary value, or nil for a type no attribute takes.
    static func attribute(_ value: Any) -> AttributeValue? {
        if let text = value as? String { return .string(text) }
        if let bytes = value as? Data { return .data(bytes) }
        if let date = value as? Date { return .date(date) }
        if let flag = boolean(value) { return .bool(flag) }
        if let number = integer(value) { return .number(number) }
        return nil
    }

    static func typeName(_ value: Any) -> String { String(describing: type(of: value)) }

    /// The dictionary value for a stored attribute: `String`, `Data`, `Date`, or `Int` for numbers (Apple
    /// returns CFNumber, also for `sync` and other flags).
    static func object(_ value: AttributeValue) -> Any {
        switch value {
        case .string(let text): text
        case .data(let bytes): bytes
        case .number(let number): Int(number)
        case .date(let date): date
        case .bool(let flag): flag ? 1 : 0
        }
    }
}
