package import FoundationEssentials

/// The plaintext layout of an item's attributes before encryption: a format byte, a count, then for each
/// attribute (sorted by key) its key, a kind tag and the value. Decoding refuses anything malformed.
package enum AttributeBlob {
    private static let format: UInt8 = 1

    package static func encode(_ attributes: [AttributeKey: AttributeValue]) -> Data {
        var writer = ByteWriter(capacity: 256)
        encode(attributes, into: &writer)
        return writer.data
    }

    /// The blob appended to `writer` (to seal it straight from the writer's bytes, with no `Data` copy).
    package static func encode(_ attributes: [AttributeKey: AttributeValue], into writer: inout ByteWriter) {
        writer.append(format)
        writer.append(UInt32(attributes.count))
        // Sorted as pairs: looking each sorted key up again would hash every name a second time.
        for (key, value) in attributes.sorted(by: { $0.key < $1.key }) {
            writer.appendField(key.rawValue)
            switch value {
            case .string(let text):
                writer.append(AttributeKind.string.rawValue)
                writer.appendField(text)
            case .data(let bytes):
                writer.append(AttributeKind.data.rawValue)
                writer.appendField(bytes)
            case .number(let number):
                writer.append(AttributeKind.number.rawValue)
                writer.append(number)
            case .date(let date):
                writer.append(AttributeKind.date.rawValue)
                writer.append(date.timeIntervalSinceReferenceDate.bitPattern)
            case .bool(let flag):
                writer.append(AttributeKind.bool.rawValue)
                writer.append(flag ? 1 as UInt8 : 0)
            }
        }
    }

    package static func decode(_ data: Data) -> [AttributeKey: AttributeValue]? {
        data.withUnsafeBytes { decode(ByteReader($0)) }
    }

    private static func decode(_ start: ByteReader) -> [AttributeKey: AttributeValue]? {
        var reader = start
        do {
            guard try reader.readByte() == format else { return nil }
            let count = try reader.readUInt32()
            guard count <= 4096 else { return nil }
            var attributes: [AttributeKey: AttributeValue] = [:]
            attributes.reserveCapacity(Int(count))
            for _ in 0..<count {
                let key = AttributeKey(rawValue: try reader.readText())
                guard let kind = AttributeKind(rawValue: try reader.readByte()) else { return nil }
                let value: AttributeValue
                switch kind {
                case .string: value = .string(try reader.readText())
                case .data: value = .data(try reader.readField())
                case .number: value = .number(try reader.readInt64())
                case .date:
                    value = .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.readUInt64())))
                case .bool: value = .bool(try reader.readByte() != 0)
                }
                guard attributes.updateValue(value, forKey: key) == nil else { return nil }
            }
            return reader.isAtEnd ? attributes : nil
        } catch {
            return nil  // Malformed plaintext is reported by the caller as errSecDecode.
        }
    }
}
