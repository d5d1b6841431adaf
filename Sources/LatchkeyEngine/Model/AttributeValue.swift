public import FoundationEssentials

/// The kind of value an attribute holds.
public enum AttributeKind: UInt8, Hashable, Sendable, CustomStringConvertible {
    /// UTF-8 text.
    case string = 1
    /// Bytes.
    case data = 2
    /// A signed 64-bit integer.
    case number = 3
    /// A point in time.
    case date = 4
    /// True or false.
    case bool = 5

    public var description: String {
        switch self {
        case .string: "string"
        case .data: "data"
        case .number: "number"
        case .date: "date"
        case .bool: "boolean"
        }
    }
}

/// A typed attribute value.
///
/// Strings compare by their exact UTF-8 bytes (as Apple's keychain does), not by Unicode canonical
/// equivalence; dates compare by their exact time interval.
public enum AttributeValue: Hashable, Sendable, CustomStringConvertible {
    /// UTF-8 text.
    case string(String)
    /// Bytes.
    case data(Data)
    /// A signed 64-bit integer.
    case number(Int64)
    /// A point in time.
    case date(Date)
    /// True or false.
    case bool(Bool)

    /// The kind of this value.
    public var kind: AttributeKind {
        switch self {
        case .string: .string
        case .data: .data
        case .number: .number
        case .date: .date
        case .bool: .bool
        }
    }

    public static func == (lhs: AttributeValue, rhs: AttributeValue) -> Bool {
        switch (lhs, rhs) {
        case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
        case (.data(let a), .data(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.date(let a), .date(let b)):
            a.timeIntervalSinceReferenceDate.bitPattern
                == b.timeIntervalSinceReferenceDate.bitPattern
        case (.bool(let a), .bool(let b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        switch self {
        case .string(let value): hasher.combine(Array(value.utf8))
        case .data(let value): hasher.combine(value)
        case .number(let value): hasher.combine(value)
        case .date(let value): hasher.combine(value.timeIntervalSinceReferenceDate.bitPattern)
        case .bool(let value): hasher.combine(value)
        }
    }

    /// The kind and size only: attribute values can be sensitive, so descriptions never show them.
    public var description: String {
        switch self {
        case .string(let value): "string(\(value.utf8.count) bytes)"
        case .data(let value): "data(\(value.count) bytes)"
        case .number: "number"
        case .date: "date"
        case .bool: "boolean"
        }
    }

    /// The string, when this is a string value.
    public var stringValue: String? { if case .string(let value) = self { value } else { nil } }
    /// The bytes, when this is a data value.
    public var dataValue: Data? { if case .data(let value) = self { value } else { nil } }
    /// The integer, when this is a number value.
    public var numberValue: Int64? { if case .number(let value) = self { value } else { nil } }
    /// The date, when this is a date value.
    public var dateValue: Date? { if case .date(let value) = self { value } else { nil } }
    /// The boolean, when this is a boolean value.
    public var boolValue: Bool? { if case .bool(let value) = self { value } else { nil } }
}
