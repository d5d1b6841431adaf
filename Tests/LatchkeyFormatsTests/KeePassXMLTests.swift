import LatchkeyEngine
import LatchkeyFormats
import Testing

/// KeePass's XML as the bounded reader takes it: references, CDATA, comments, attributes in either quote,
/// protected values handed over in document order; and what it refuses: a document type declaration (no
/// entity can expand), nesting beyond its depth, references XML does not define, mismatched tags.
@Suite struct KeePassXMLTests {
    func parse(
        _ text: String,
        unprotect: @escaping (inout [UInt8]) throws(KeychainError) -> Void = {
            (_: inout [UInt8]) throws(KeychainError) in
        }
    )
        throws -> XMLElement
    {
        try KeePassXML.parse(Array(text.utf8), what: "the XML", unprotect: unprotect)
    }

    @Test func textReferencesCDATAAndProtectedValuesInOrder() throws {
        var order: [String] = []
        let root = try parse(
            """
            \u{FEFF}<?xml version="1.0" encoding="UTF-8"?>
            <!-- a comment -->
            <A x='1' y="&quot;2&quot;"><B>&lt;&amp;&gt; &#233;&#x2713;</B><C><![CDATA[<raw> & ]]></C>
            <P Protected="True">first</P><Q><P Protected="True">second</P></Q><P Protected="True"></P><E/></A>
            """
        ) { (value: inout [UInt8]) throws(KeychainError) in
            order.append(String(decoding: value, as: UTF8.self))
            value = Array("[\(order.count)]".utf8)
        }
        #expect(root.name == "A" && root.attributes == ["x": "1", "y": "\"2\""])
        #expect(root.child("B")?.text == "<&> é✓")
        #expect(root.child("C")?.text == "<raw> & ")
        #expect(order == ["first", "second"])  // An empty protected value is no ciphertext.
        #expect(root.children("P").map(\.text) == ["[1]", ""])
        #expect(root.child("Q")?.child("P")?.text == "[2]")
        #expect(root.child("E")?.children.isEmpty == true)
    }

    @Test func whatTheReaderRefuses() throws {
        #expect(throws: KeychainError.decode("the XML: a document type declaration is not accepted at byte 0")) {
            try parse("<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>")
        }
        let deep = String(repeating: "<a>", count: 70) + String(repeating: "</a>", count: 70)
        #expect(throws: KeychainError.decode("the XML: elements nest deeper than 64 at byte 192")) { try parse(deep) }
        #expect(throws: KeychainError.decode("the XML: the reference &nbsp; is not one XML defines at byte 9")) {
            try parse("<a>&nbsp;</a>")
        }
        #expect(throws: KeychainError.decode("the XML: </b> closes <a> at byte 6")) { try parse("<a></b>") }
        #expect(throws: KeychainError.decode("the XML: a name is missing at byte 5")) { try parse("<a>x<") }
        #expect(throws: KeychainError.decode("the XML: content after the root element at byte 4")) {
            try parse("<a/><b/>")
        }
    }
}
