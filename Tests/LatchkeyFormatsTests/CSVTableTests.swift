import LatchkeyEngine
import LatchkeyFormats
import Testing

/// RFC 4180 as browsers write it: quotes, doubled quotes, commas and line breaks inside quotes, CRLF or LF,
/// a byte order mark; and the errors, with the line.
@Suite struct CSVTableTests {
    func parse(_ text: String) throws -> [[String]] { try CSVTable.parse(Array(text.utf8), what: "the file") }

    @Test func quotedFieldsHoldCommasQuotesAndLineBreaks() throws {
        #expect(
            try parse("\u{FEFF}a,b,c\r\n\"x,1\",\"say \"\"hi\"\"\",\"two\nlines\"\r\n,,\n")
                == [["a", "b", "c"], ["x,1", "say \"hi\"", "two\nlines"], ["", "", ""]])
        #expect(try parse("a,b\nc,d") == [["a", "b"], ["c", "d"]])
        #expect(try parse("a\n\n\"\"\n") == [["a"], [""]])
        #expect(try parse("ünï,✓\n") == [["ünï", "✓"]])
    }

    @Test func malformedTextIsRefusedWithItsRow() throws {
        #expect(throws: KeychainError.decode("the file, line 2: text after a closing quote")) {
            try parse("a,b\n\"x\"y,z\n")
        }
        #expect(throws: KeychainError.decode("the file, line 3: a quote is never closed")) {
            try parse("a\nb\n\"open\n")
        }
        #expect(throws: KeychainError.decode("the file is not UTF-8 text")) {
            try CSVTable.parse([0x61, 0xFF, 0x0A], what: "the file")
        }
    }
}
