import LatchkeyCrypto
package import LatchkeyEngine

/// One element of KeePass's XML: its name, attributes, child elements and text (its value: the text's
/// bytes, or a protected value's decrypted bytes).
package final class XMLElement {
    package let name: String
    package let attributes: [String: String]
    package var children: [XMLElement] = []
    package var value: [UInt8] = []

    init(name: String, attributes: [String: String]) {
        self.name = name
        self.attributes = attributes
    }

    /// The first child named `name`.
    package func child(_ name: String) -> XMLElement? { children.first { $0.name == name } }
    /// The children named `name`.
    package func children(_ name: String) -> [XMLElement] { children.filter { $0.name == name } }
    /// The value as text (invalid UTF-8 repaired: only secrets may be bytes, and they are read as `value`).
    package var text: String { String(decoding: value, as: UTF8.self) }

    /// Overwrites every value in the tree (they held secrets).
    func wipe() {
        value.withUnsafeMutableBytes { wipeBytes($0) }
        for child in children { child.wipe() }
    }
}

/// A reader of the XML that KeePass databases hold — elements, attributes, text, CDATA, comments, the
/// five predefined entities and character references — written for that and bounded, rather than linking
/// libxml2 through FoundationXML (which would bring swift-corelibs-foundation and ICU into `latchkey`;
/// docs/DESIGN-NOTES.md, "Other programs' files"). A document type declaration is refused (no entity can be
/// defined, so none can expand), nesting stops at `maximumDepth`, and every value marked `Protected="True"`
/// is handed, in document order, to `unprotect` as the base64 it holds, its plaintext kept in its place.
package struct KeePassXML {
    package static let maximumDepth = 64

    let bytes: [UInt8]
    var position = 0
    let what: String
    let unprotect: (inout [UInt8]) throws(KeychainError) -> Void

    /// Parses `bytes`; the document's root element.
    package static func parse(
        _ bytes: [UInt8], what: String, unprotect: @escaping (inout [UInt8]) throws(KeychainError) -> Void
    ) throws(KeychainError) -> XMLElement {
        var reader = KeePassXML(bytes: bytes, what: what, unprotect: unprotect)
        return try reader.document()
    }

    func damaged(_ detail: String) -> KeychainError {
        KeychainError.decode("\(what): \(detail) at byte \(position)")
    }

    func starts(with text: String) -> Bool {
        let utf8 = text.utf8
        guard position + utf8.count <= bytes.count else { return false }
        return bytes[position..<position + utf8.count].elementsEqual(utf8)
    }

    mutating func skip(past terminator: String) throws(KeychainError) {
        let needle = Array(terminator.utf8)
        while position + needle.count <= bytes.count {
            if bytes[position..<position + needle.count].elementsEqual(needle) {
                position += needle.count
                return
            }
            position += 1
        }
        throw damaged("\"\(terminator)\" never comes")
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
    static func isNameByte(_ byte: UInt8) -> Bool {
        !isSpace(byte) && byte != UInt8(ascii: ">") && byte != UInt8(ascii: "/") && byte != UInt8(ascii: "=")
            && byte != UInt8(ascii: "<") && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "'")
    }

    mutating func skipSpace() {
        while position < bytes.count && Self.isSpace(bytes[position]) { position += 1 }
    }

    mutating func name() throws(KeychainError) -> String {
        let start = position
        while position < bytes.count && Self.isNameByte(bytes[position]) { position += 1 }
        guard position > start else { throw damaged("a name is missing") }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    mutating func document() throws(KeychainError) -> XMLElement {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
        while true {
            skipSpace()
            guard position < bytes.count else { throw damaged("the document has no element") }
            if starts(with: "<?") {
                try skip(past: "?>")
            } else if starts(with: "<!--") {
                try skip(past: "-->")
            } else if starts(with: "<!") {
                throw damaged("a document type declaration is not accepted")
            } else if starts(with: "<") {
                break
            } else {
                throw damaged("text before the root element")
            }
        }
        let root = try element(depth: 0)
        while true {
            skipSpace()
            if position == bytes.count { return root }
            if starts(with: "<!--") {
                try skip(past: "-->")
            } else if starts(with: "<?") {
                try skip(past: "?>")
            } else {
                throw damaged("content after the root element")
            }
        }
    }

    /// An element, from its `<` to the end of its end tag.
    mutating func element(depth: Int) throws(KeychainError) -> XMLElement {
        guard depth < Self.maximumDepth else { throw damaged("elements nest deeper than \(Self.maximumDepth)") }
        position += 1  // "<"
        let name = try name()
        var attributes: [String: String] = [:]
        while true {
            skipSpace()
            guard position < bytes.count else { throw damaged("the tag <\(name)> is not closed") }
            if bytes[position] == UInt8(ascii: "/") {
                guard position + 1 < bytes.count, bytes[position + 1] == UInt8(ascii: ">") else {
                    throw damaged("\"/\" inside the tag <\(name)>")
                }
                position += 2
                return XMLElement(name: name, attributes: attributes)
            }
            if bytes[position] == UInt8(ascii: ">") {
                position += 1
                break
            }
            let attribute = try self.name()
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "=") else {
                throw damaged("the attribute \(attribute) has no value")
            }
            position += 1
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'")
            else { throw damaged("the attribute \(attribute)'s value is not quoted") }
            let quote = bytes[position]
            position += 1
            let start = position
            while position < bytes.count && bytes[position] != quote {
                guard bytes[position] != UInt8(ascii: "<") else { throw damaged("\"<\" in an attribute's value") }
                position += 1
            }
            guard position < bytes.count else { throw damaged("the attribute \(attribute)'s value is not closed") }
            attributes[attribute] = String(decoding: try Self.unescape(bytes[start..<position], self), as: UTF8.self)
            position += 1
        }
        let element = XMLElement(name: name, attributes: attributes)
        var text: [UInt8] = []
        while true {
            guard position < bytes.count else { throw damaged("the element <\(name)> is not closed") }
            if bytes[position] != UInt8(ascii: "<") {
                let start = position
                while position < bytes.count && bytes[position] != UInt8(ascii: "<") { position += 1 }
                text.append(contentsOf: try Self.unescape(bytes[start..<position], self))
            } else if starts(with: "</") {
                position += 2
                let end = try self.name()
                skipSpace()
                guard end == name, position < bytes.count, bytes[position] == UInt8(ascii: ">") else {
                    throw damaged("</\(end)> closes <\(name)>")
                }
                position += 1
                break
            } else if starts(with: "<![CDATA[") {
                position += 9
                let start = position
                try skip(past: "]]>")
                text.append(contentsOf: bytes[start..<position - 3])
            } else if starts(with: "<!--") {
                try skip(past: "-->")
            } else if starts(with: "<?") {
                try skip(past: "?>")
            } else if starts(with: "<!") {
                throw damaged("a declaration inside <\(name)>")
            } else {
                element.children.append(try self.element(depth: depth + 1))
            }
        }
        if element.attributes["Protected"]?.lowercased() == "true" {
            if !text.isEmpty {
                try unprotect(&text)
            }
        }
        element.value = text
        return element
    }

    /// Text with its references replaced: `&lt;` `&gt;` `&amp;` `&quot;` `&apos;` and `&#…;` `&#x…;`.
    static func unescape(_ raw: ArraySlice<UInt8>, _ reader: KeePassXML) throws(KeychainError) -> [UInt8] {
        guard raw.contains(UInt8(ascii: "&")) else { return Array(raw) }
        var output: [UInt8] = []
        output.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index < raw.endIndex {
            let byte = raw[index]
            guard byte == UInt8(ascii: "&") else {
                output.append(byte)
                index += 1
                continue
            }
            guard let end = raw[index...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                throw reader.damaged("an \"&\" starts no reference")
            }
            let name = String(decoding: raw[(index + 1)..<end], as: UTF8.self)
            switch name {
            case "lt": output.append(UInt8(ascii: "<"))
            case "gt": output.append(UInt8(ascii: ">"))
            case "amp": output.append(UInt8(ascii: "&"))
            case "quot": output.append(UInt8(ascii: "\""))
            case "apos": output.append(UInt8(ascii: "'"))
            default:
                let number: UInt32?
                if name.hasPrefix("#x") || name.hasPrefix("#X") {
                    number = UInt32(name.dropFirst(2), radix: 16)
                } else if name.hasPrefix("#") {
                    number = UInt32(name.dropFirst(1), radix: 10)
                } else {
                    number = nil
                }
                guard let number, let scalar = Unicode.Scalar(number), number != 0 else {
                    throw reader.damaged("the reference &\(name); is not one XML defines")
                }
                output.append(contentsOf: String(Character(scalar)).utf8)
            }
            index = end + 1
        }
        return output
    }
}
