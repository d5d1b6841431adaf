/// Lowercase hexadecimal text for bytes, and back: one encoder for the whole code base.
package enum Hex {
    private static let lowercaseDigits = Array("0123456789abcdef".utf8)
    private static let uppercaseDigits = Array("0123456789ABCDEF".utf8)

    /// `"00ff…"` for the bytes (`"00FF…"` when `uppercase`).
    package static func encode(_ bytes: some Sequence<UInt8>, uppercase: Bool = false) -> String {
        // Called from other modules unspecialized: contiguous bytes (`Data`, arrays) are encoded from their
        // buffer in one pass rather than through their iterator a byte at a time.
        if let text = bytes.withContiguousStorageIfAvailable({ encode(buffer: $0, uppercase: uppercase) }) {
            return text
        }
        return Array(bytes).withUnsafeBufferPointer { encode(buffer: $0, uppercase: uppercase) }
    }

    private static func encode(buffer: UnsafeBufferPointer<UInt8>, uppercase: Bool) -> String {
        let digits = uppercase ? uppercaseDigits : lowercaseDigits
        return digits.withUnsafeBufferPointer { digits in
            String(unsafeUninitializedCapacity: buffer.count * 2) { text in
                for (offset, byte) in buffer.enumerated() {
                    text[2 * offset] = digits[Int(byte >> 4)]
                    text[2 * offset + 1] = digits[Int(byte & 0x0F)]
                }
                return buffer.count * 2
            }
        }
    }

    /// The bytes of hexadecimal text (either case); nil for an odd length or a character that is not a digit.
    package static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(digits: $0) }
    }

    /// The bytes of hexadecimal text in part of a string; nil as for `decode(_:)`.
    package static func decode(_ text: Substring) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(digits: $0) }
    }

    private static func decode(digits: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// The value of one hexadecimal digit (either case), or nil.
    package static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
