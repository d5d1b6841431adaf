package import LatchkeyEngine

/// KDBX 4's typed dictionary (the KDF's parameters, public custom data): a version (1.x), then entries of a
/// type byte, a name and a value, each with a 32-bit little-endian length, to a type of 0.
package struct VariantMap: Sendable, Hashable {
    package enum Value: Sendable, Hashable {
        case uint32(UInt32)
        case uint64(UInt64)
        case bool(Bool)
        case int32(Int32)
        case int64(Int64)
        case string(String)
        case bytes([UInt8])
    }

    package var values: [String: Value] = [:]
    /// The names in the order written.
    package var order: [String] = []

    package init() {}

    package subscript(name: String) -> Value? {
        get { values[name] }
        set {
            if values[name] == nil { order.append(name) }
            values[name] = newValue
        }
    }

    package static func read(_ bytes: ArraySlice<UInt8>, what: String) throws(KeychainError) -> VariantMap {
        var reader = FieldReader(Array(bytes), what: what)
        let version = try reader.uint16LE("the version")
        guard version >> 8 <= 1 else { throw KeychainError.decode("\(what) has version \(version >> 8), not 1") }
        var map = VariantMap()
        while true {
            let type = try reader.byte("a type")
            if type == 0 { return map }
            let nameLength = Int(try reader.uint32LE("a name's length"))
            let name = String(decoding: try reader.take(nameLength, "a name"), as: UTF8.self)
            let length = Int(try reader.uint32LE("\(name)'s length"))
            let value = try reader.take(length, "\(name)'s value")
            func integer<T: FixedWidthInteger>(_: T.Type) throws(KeychainError) -> T {
                guard value.count == MemoryLayout<T>.size else {
                    throw KeychainError.decode("\(what): \(name) has \(value.count) bytes, not \(MemoryLayout<T>.size)")
                }
                var result: T = 0
                for (index, byte) in value.enumerated() { result |= T(byte) << (index * 8) }
                return result
            }
            switch type {
            case 0x04: map[name] = .uint32(try integer(UInt32.self))
            case 0x05: map[name] = .uint64(try integer(UInt64.self))
            case 0x08: map[name] = .bool(try integer(UInt8.self) != 0)
            case 0x0C: map[name] = .int32(try integer(Int32.self))
            case 0x0D: map[name] = .int64(try integer(Int64.self))
            case 0x18: map[name] = .string(String(decoding: value, as: UTF8.self))
            case 0x42: map[name] = .bytes(Array(value))
            default: throw KeychainError.decode("\(what): \(name) has the unknown type \(type)")
            }
        }
    }

    package func written() -> [UInt8] {
        var writer = FieldWriter()
        writer.uint16LE(0x0100)
        for name in order {
            guard let value = values[name] else { continue }
            let (type, bytes): (UInt8, [UInt8])
            func little<T: FixedWidthInteger>(_ number: T) -> [UInt8] {
                (0..<MemoryLayout<T>.size).map { UInt8(truncatingIfNeeded: number >> ($0 * 8)) }
            }
            switch value {
            case .uint32(let number): (type, bytes) = (0x04, little(number))
            case .uint64(let number): (type, bytes) = (0x05, little(number))
            case .bool(let flag): (type, bytes) = (0x08, [flag ? 1 : 0])
            case .int32(let number): (type, bytes) = (0x0C, little(number))
            case .int64(let number): (type, bytes) = (0x0D, little(number))
            case .string(let text): (type, bytes) = (0x18, Array(text.utf8))
            case .bytes(let data): (type, bytes) = (0x42, data)
            }
            writer.append(type)
            writer.uint32LE(UInt32(name.utf8.count))
            writer.append(Array(name.utf8))
            writer.uint32LE(UInt32(bytes.count))
            writer.append(bytes)
        }
        writer.append(0)
        return writer.bytes
    }

    /// The value as an unsigned integer, whatever its integer type.
    package func unsigned(_ name: String) -> UInt64? {
        switch values[name] {
        case .uint32(let number): UInt64(number)
        case .uint64(let number): number
        case .int32(let number): number >= 0 ? UInt64(number) : nil
        case .int64(let number): number >= 0 ? UInt64(number) : nil
        default: nil
        }
    }

    package func bytes(_ name: String) -> [UInt8]? {
        if case .bytes(let data) = values[name] { return data }
        return nil
    }
}
