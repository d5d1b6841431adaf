package import LatchkeyEngine

/// Comma-separated values as RFC 4180 has them and browsers write them: records ended by CRLF or LF, fields
/// quoted with `"` when they hold a comma, a quote (doubled) or a line break, a UTF-8 byte order mark
/// ignored. The text must be UTF-8; a quote left open or text after a closing quote is `errSecDecode` with
/// the line's number.
package enum CSVTable {
    /// The most rows read (a browser's export holds a few thousand).
    package static let maximumRows = 1_000_000

    package static func parse(_ bytes: [UInt8], what: String) throws(KeychainError) -> [[String]] {
        var start = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { start = 3 }
        guard String(validating: bytes[start...], as: UTF8.self) != nil else {
            throw KeychainError.decode("\(what) is not UTF-8 text")
        }
        var rows: [[String]] = []
        var row: [String] = []
        var field: [UInt8] = []
        var index = start
        var quoted = false
        var afterQuote = false
        var rowNumber = 1
        var quoteRow = 1
        var rowQuoted = false
        func endField() {
            row.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
            afterQuote = false
        }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if index < bytes.count && bytes[index] == UInt8(ascii: "\"") {
                        field.append(byte)
                        index += 1
                    } else {
                        quoted = false
                        afterQuote = true
                    }
                } else {
                    if byte == UInt8(ascii: "\n") { rowNumber += 1 }
                    field.append(byte)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: ","):
                endField()
            case UInt8(ascii: "\r") where index < bytes.count && bytes[index] == UInt8(ascii: "\n"):
                break  // The LF that follows ends the record.
            case UInt8(ascii: "\n"):
                endField()
                if rowQuoted || !(row.count == 1 && row[0].isEmpty) { rows.append(row) }  // A blank line is none.
                guard rows.count <= maximumRows else {
                    throw KeychainError.decode("\(what) has more than \(maximumRows) rows")
                }
                row = []
                rowQuoted = false
                rowNumber += 1
            case UInt8(ascii: "\"") where field.isEmpty && !afterQuote:
                quoted = true
                rowQuoted = true
                quoteRow = rowNumber
            default:
                guard !afterQuote else {
                    throw KeychainError.decode("\(what), line \(rowNumber): text after a closing quote")
                }
                field.append(byte)
            }
        }
        guard !quoted else { throw KeychainError.decode("\(what), line \(quoteRow): a quote is never closed") }
        if !field.isEmpty || !row.isEmpty || afterQuote {
            endField()
            rows.append(row)
        }
        return rows
    }
}
