import LatchkeyCrypto

extension String {
    /// The text with each `%XX` replaced by the byte it encodes, as Foundation's `removingPercentEncoding`:
    /// nil when a `%` is not followed by two hexadecimal digits or the bytes are not UTF-8 (a connection
    /// string's query values are written this way).
    package var percentDecoded: String? {
        var bytes: [UInt8] = []
        var utf8 = self.utf8.makeIterator()
        while let byte = utf8.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = utf8.next().flatMap(Hex.value), let low = utf8.next().flatMap(Hex.value) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
