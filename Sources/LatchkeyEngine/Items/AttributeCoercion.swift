import FoundationEssentials

extension ItemSchema {
    /// The kind of `key` in this class; `errSecNoSuchAttr` when the class has no such attribute.
    func kind(of key: AttributeKey) throws(KeychainError) -> SchemaKind {
        // Free-form attributes: the Secret Service's on generic passwords, and a password manager's custom fields
        // on a site's login (an imported entry with a URL is an internet password; docs/IMPORT-EXPORT.md).
        if itemClass == .genericPassword || itemClass == .internetPassword, AttributeKey.isSecretServiceAttribute(key) {
            return .string
        }
        guard let kind = kinds[key] else {
            throw KeychainError(
                .noSuchAttribute, "attribute '\(key.rawValue)' does not exist in class \(itemClass.rawValue)")
        }
        return kind
    }

    /// Converts a caller's value for `key` the way Apple's converters do (see `SchemaKind`), and refuses
    /// values of the wrong type or of absurd size with `errSecParam` naming the key.
    func coerce(_ value: AttributeValue, for key: AttributeKey) throws(KeychainError) -> AttributeValue {
        let kind = try kind(of: key)
        let converted: AttributeValue? =
            switch (kind, value) {
            case (.blob, .string), (.blob, .data), (.blob, .number): value
            case (.data, .data): value
            case (.data, .string(let text)): .data(Data(text.utf8))
            case (.data, .number(let number)):
                Int32(exactly: number).map { n in withUnsafeBytes(of: n) { .data(Data($0)) } }
            case (.number, .number): value
            case (.number, .bool(let flag)): .number(flag ? 1 : 0)
            case (.number, .string(let text)): Self.integerLiteral(text).map(AttributeValue.number) ?? value
            case (.date, .date): value
            case (.string, .string): value
            case (.string, .data(let bytes)): String(validating: bytes, as: UTF8.self).map(AttributeValue.string)
            case (.accessibility, .string(let code)): Accessibility(rawValue: code) == nil ? nil : value
            default: nil
            }
        guard let converted else {
            let expected: String =
                switch kind {
                case .blob: "a string or data"
                case .data: "data"
                case .number: "a number"
                case .date: "a date"
                case .string: "a string"
                case .accessibility: "one of ak, ck, dk, aku, cku, dku, akpu"
                }
            throw KeychainError.param("attribute '\(key.rawValue)' must be \(expected), not a \(value.kind) value")
        }
        let size: Int =
            switch converted {
            case .string(let text): text.utf8.count
            case .data(let bytes): bytes.count
            default: 0
            }
        guard size <= ItemLimits.maximumAttributeBytes else {
            throw KeychainError.param(
                "attribute '\(key.rawValue)' is larger than \(ItemLimits.maximumAttributeBytes) bytes")
        }
        return converted
    }

    /// The integer an integer literal denotes, when the text is exactly its canonical spelling ("42", "-1";
    /// not "042" or "+1"), as `CFStringGetIntValue` round-tripping in Apple's `copyNumber`.
    private static func integerLiteral(_ text: String) -> Int64? {
        guard let number = Int64(text), String(number) == text else { return nil }
        return number
    }
}

/// The canonical bytes of a stored value: what the keyed digests hash and what matching compares. Text
/// and data with the same bytes are the same (as Apple matches Blob attributes by the digest of their
/// bytes); numbers and dates have their own tags.
enum CanonicalValue {
    static func bytes(of value: AttributeValue) -> Data {
        var writer = ByteWriter(capacity: 16)
        append(value, to: &writer)
        return writer.data
    }

    /// Appends the canonical bytes of `value` as a length-prefixed field, without an intermediate copy.
    static func appendField(_ value: AttributeValue, to writer: inout ByteWriter) {
        let length: Int =
            switch value {
            case .string(let text): 1 + text.utf8.count
            case .data(let bytes): 1 + bytes.count
            case .number, .bool, .date: 9
            }
        writer.append(UInt32(length))
        append(value, to: &writer)
    }

    private static func append(_ value: AttributeValue, to writer: inout ByteWriter) {
        switch value {
        case .string(let text):
            writer.append(UInt8(ascii: "b"))
            writer.appendRaw(text.utf8)
        case .data(let bytes):
            writer.append(UInt8(ascii: "b"))
            writer.appendRaw(bytes)
        case .number(let number):
            writer.append(UInt8(ascii: "n"))
            writer.append(number)
        case .bool(let flag):
            writer.append(UInt8(ascii: "n"))
            writer.append(Int64(flag ? 1 : 0))
        case .date(let date):
            writer.append(UInt8(ascii: "d"))
            writer.append(date.timeIntervalSinceReferenceDate.bitPattern)
        }
    }

    /// Whether two values match as the keychain matches them.
    static func matches(_ a: AttributeValue, _ b: AttributeValue) -> Bool { bytes(of: a) == bytes(of: b) }
}
