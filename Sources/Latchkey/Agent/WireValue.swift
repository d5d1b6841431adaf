public import Foundation

/// A value of an Apple-style dictionary as it travels between a client and the agent: every type the
/// dictionaries hold, with booleans kept apart from numbers (Apple's `kSecReturn…` must be booleans).
public indirect enum WireValue: Hashable, Sendable {
    /// `NSNull`.
    case null
    /// Text.
    case string(String)
    /// Bytes (a secret, a persistent reference, a data attribute).
    case data(Data)
    /// A whole number.
    case integer(Int64)
    /// A boolean, kept apart from numbers.
    case boolean(Bool)
    /// A date.
    case date(Date)
    /// A fractional number.
    case double(Double)
    /// An array (of results).
    case array([WireValue])
    /// A dictionary (a query, attributes, a result).
    case dictionary([String: WireValue])

    /// Nesting deeper than this is refused when decoding.
    static let maximumDepth = 8

    /// The wire value of a dictionary value; nil for a type no dictionary holds.
    public init?(_ value: Any) {
        switch value {
        case is NSNull: self = .null
        case let text as String: self = .string(text)
        case let data as Data: self = .data(data)
        case let date as Date: self = .date(date)
        case let array as [Any]:
            var values: [WireValue] = []
            for element in array {
                guard let wire = WireValue(element) else { return nil }
                values.append(wire)
            }
            self = .array(values)
        case let dictionary as [String: Any]:
            guard let values = WireValue.dictionary(dictionary) else { return nil }
            self = .dictionary(values)
        default:
            if let flag = DictionaryValue.boolean(value) {
                self = .boolean(flag)
            } else if let number = DictionaryValue.integer(value) {
                self = .integer(number)
            } else if let number = value as? NSNumber {
                self = .double(number.doubleValue)
            } else {
                return nil
            }
        }
    }

    /// Every value of a dictionary, or nil when one has a type no dictionary holds.
    public static func dictionary(_ dictionary: [String: Any]) -> [String: WireValue]? {
        var values: [String: WireValue] = [:]
        for (key, value) in dictionary {
            guard let wire = WireValue(value) else { return nil }
            values[key] = wire
        }
        return values
    }

    /// The value as the Swift object a dictionary holds.
    public var object: Any {
        switch self {
        case .null: NSNull()
        case .string(let text): text
        case .data(let data): data
        case .integer(let number): Int(truncatingIfNeeded: number)
        case .boolean(let flag): flag
        case .date(let date): date
        case .double(let number): number
        case .array(let values): values.map(\.object)
        case .dictionary(let values): values.mapValues(\.object)
        }
    }

    /// The dictionary this value holds, as `[String: Any]`.
    public var dictionaryObject: [String: Any]? {
        if case .dictionary(let values) = self { return values.mapValues(\.object) }
        return nil
    }

    func encode(into writer: inout ByteWriter) {
        switch self {
        case .null: writer.append(0 as UInt8)
        case .string(let text):
            writer.append(1 as UInt8)
            writer.appendField(text)
        case .data(let data):
            writer.append(2 as UInt8)
            writer.appendField(data)
        case .integer(let number):
            writer.append(3 as UInt8)
            writer.append(number)
        case .boolean(let flag):
            writer.append(4 as UInt8)
            writer.append(flag ? 1 as UInt8 : 0)
        case .date(let date):
            writer.append(5 as UInt8)
            writer.append(date.timeIntervalSinceReferenceDate.bitPattern)
        case .double(let number):
            writer.append(6 as UInt8)
            writer.append(number.bitPattern)
        case .array(let values):
            writer.append(7 as UInt8)
            writer.append(UInt32(values.count))
            for value in values { value.encode(into: &writer) }
        case .dictionary(let values):
            writer.append(8 as UInt8)
            writer.append(UInt32(values.count))
            for key in values.keys.sorted() {
                writer.appendField(key)
                values[key]!.encode(into: &writer)
            }
        }
    }

    static func decode(from reader: inout ByteReader, depth: Int = 0) throws(AgentProtocolError) -> WireValue {
        guard depth <= maximumDepth else { throw .malformed("values nested too deeply") }
        do {
            switch try reader.readByte() {
            case 0: return .null
            case 1: return .string(try reader.readText())
            case 2: return .data(try reader.readField())
            case 3: return .integer(try reader.readInt64())
            case 4:
                let flag = try reader.readByte()
                guard flag <= 1 else { throw AgentProtocolError.malformed("a boolean is neither 0 nor 1") }
                return .boolean(flag == 1)
            case 5: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.readUInt64())))
            case 6: return .double(Double(bitPattern: try reader.readUInt64()))
            case 7:
                let count = Int(try reader.readUInt32())
                guard count <= reader.remaining else { throw AgentProtocolError.malformed("an array longer than its message") }
                var values: [WireValue] = []
                values.reserveCapacity(count)
                for _ in 0..<count { values.append(try decode(from: &reader, depth: depth + 1)) }
                return .array(values)
            case 8:
                let count = Int(try reader.readUInt32())
                guard count <= reader.remaining else { throw AgentProtocolError.malformed("a dictionary longer than its message") }
                var values: [String: WireValue] = [:]
                for _ in 0..<count {
                    let key = try reader.readText()
                    guard values.updateValue(try decode(from: &reader, depth: depth + 1), forKey: key) == nil else {
                        throw AgentProtocolError.malformed("a dictionary repeats the key \(key)")
                    }
                }
                return .dictionary(values)
            case let tag:
                throw AgentProtocolError.malformed("unknown value tag \(tag)")
            }
        } catch let error as AgentProtocolError {
            throw error
        } catch {
            throw .malformed("a value is truncated")
        }
    }
}
