import Foundation

/// Converts the values found in Apple-style dictionaries (Swift or Foundation types) into typed values.
package enum DictionaryValue {
    /// A Swift `Bool`, or an `NSNumber` made from one (`objCType` "c" or "B"): Apple's CFBoolean.
    package static func boolean(_ value: Any) -> Bool? {
        if let flag = value as? Bool, type(of: value) == Bool.self { return flag }
        if let number = value as? NSNumber, ["c", "B"].contains(String(cString: number.objCType)) {
            return number.boolValue
        }
        return nil
    }

    /// An integer (any Swift integer type or an integral `NSNumber`), not a boolean.
    static func integer(_ value: Any) -> Int64? {
        guard boolean(value) == nil, !(value is String), let number = value as? NSNumber else { return nil }
        let objCType = String(cString: number.objCType)
        if objCType == "f" || objCType == "d" {
            let double = number.doubleValue
            guard double.rounded() == double, let exact = Int64(exactly: double) else { return nil }
            return exact
        }
        if objCType == "Q" || objCType == "L" || objCType == "I" {
            return Int64(exactly: number.uint64Value)
        }
        return number.int64Value
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
