import FoundationEssentials

/// One attribute of a distinguished name: its type (OID contents) and its value's tag and contents.
struct NameAttribute: Sendable, Hashable {
    let type: [UInt8]
    let valueTag: UInt8
    let value: [UInt8]

    static let commonName: [UInt8] = [0x55, 0x04, 0x03]
    static let organizationName: [UInt8] = [0x55, 0x04, 0x0A]
    static let organizationalUnitName: [UInt8] = [0x55, 0x04, 0x0B]
    static let descriptionName: [UInt8] = [0x55, 0x04, 0x0D]
    /// PKCS #9 emailAddress, 1.2.840.113549.1.9.1.
    static let emailAddress: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x01]

    /// The value as text, decoded as Apple's `copyDERThingContentDescription` decodes string types: one
    /// trailing NUL dropped (not for BMPString), PrintableString and IA5String as ASCII, UTF8String,
    /// GeneralString and UniversalString as UTF-8 (as Apple does), TeletexString, VideotexString and
    /// VisibleString as Latin-1, BMPString as UTF-16BE. Nil for other types or bytes the encoding refuses
    /// (Apple shows those as a hexadecimal description instead).
    var text: String? {
        var bytes = value
        if valueTag != 0x1E, bytes.last == 0 { bytes.removeLast() }
        switch valueTag {
        case 0x13, 0x16: return bytes.allSatisfy { $0 < 0x80 } ? String(decoding: bytes, as: UTF8.self) : nil
        case 0x0C, 0x1B, 0x1C: return String(bytes: bytes, encoding: .utf8)
        case 0x14, 0x15, 0x1A: return String(bytes: bytes, encoding: .isoLatin1)
        case 0x1E: return bytes.count % 2 == 0 ? String(bytes: bytes, encoding: .utf16BigEndian) : nil
        default: return nil
        }
    }
}

/// X.501 names as Apple's `SecCertificate.c` reads them: the attributes in order, the normalized form kept
/// in `kSecAttrIssuer` and `kSecAttrSubject`, and the subject summary.
enum DistinguishedName {
    /// The relative distinguished names of a Name's contents, each a non-empty SET of (type, value)
    /// SEQUENCEs, as `createNormalizedX501Name` requires.
    static func relativeNames(_ bytes: [UInt8], contents: Range<Int>) throws(DERError) -> [[NameAttribute]] {
        var names: [[NameAttribute]] = []
        var reader = DERReader(bytes, range: contents)
        while !reader.isAtEnd {
            let rdn = try reader.next(tag: DER.set, "a relative distinguished name")
            guard !rdn.contents.isEmpty else { throw DERError(reason: "an empty relative distinguished name") }
            var attributes: [NameAttribute] = []
            var inner = DERReader(bytes, range: rdn.contents)
            while !inner.isAtEnd {
                let (_, type, value) = try attribute(bytes, &inner)
                attributes.append(
                    NameAttribute(
                        type: Array(bytes[type.contents]), valueTag: value.tag, value: Array(bytes[value.contents])))
            }
            names.append(attributes)
        }
        return names
    }

    /// The next attribute of an RDN: a SEQUENCE of a non-empty OBJECT IDENTIFIER and one value, nothing
    /// more, as Apple's parser requires.
    private static func attribute(_ bytes: [UInt8], _ reader: inout DERReader) throws(DERError)
        -> (pair: DERElement, type: DERElement, value: DERElement)
    {
        let pair = try reader.next(tag: DER.sequence, "an attribute type and value")
        var fields = DERReader(bytes, range: pair.contents)
        let type = try fields.next(tag: DER.objectIdentifier, "an attribute type")
        guard !type.contents.isEmpty else { throw DERError(reason: "an empty attribute type") }
        let value = try fields.next()
        guard fields.isAtEnd else { throw DERError(reason: "an attribute with more than a type and a value") }
        return (pair, type, value)
    }

    /// Apple's normalized name contents (`createNormalizedX501Name`): every PrintableString value
    /// upper-cased for a–z, runs of blanks (space, tab) collapsed to one space, leading and trailing blanks
    /// dropped, and the lengths of the value, its attribute and its RDN re-encoded; every other byte kept.
    static func normalized(_ bytes: [UInt8], contents: Range<Int>) throws(DERError) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(contents.count)
        var reader = DERReader(bytes, range: contents)
        while !reader.isAtEnd {
            let rdn = try reader.next(tag: DER.set, "a relative distinguished name")
            guard !rdn.contents.isEmpty else { throw DERError(reason: "an empty relative distinguished name") }
            var rdnContents: [UInt8] = []
            var lengthChanged = false
            var inner = DERReader(bytes, range: rdn.contents)
            while !inner.isAtEnd {
                let (pair, type, value) = try attribute(bytes, &inner)
                guard value.tag == DER.printableString else {
                    rdnContents += bytes[pair.whole]
                    continue
                }
                let folded = fold(bytes[value.contents])
                if folded.count == value.contents.count {
                    // Same length: the headers stay as they were, only the letters change.
                    rdnContents += bytes[pair.start..<value.contentStart] + folded
                } else {
                    lengthChanged = true
                    rdnContents += DER.element(
                        DER.sequence, Array(bytes[type.whole]) + DER.element(DER.printableString, folded))
                }
            }
            output +=
                lengthChanged
                ? DER.element(DER.set, rdnContents) : Array(bytes[rdn.start..<rdn.contentStart]) + rdnContents
        }
        return output
    }

    /// Upper-cases a–z and collapses blanks, as Apple does for PrintableString values.
    private static func fold(_ value: ArraySlice<UInt8>) -> [UInt8] {
        var folded: [UInt8] = []
        folded.reserveCapacity(value.count)
        var lastWasBlank = false
        for byte in value {
            if byte == 0x20 || byte == 0x09 {
                if !lastWasBlank && !folded.isEmpty { folded.append(0x20) }
                lastWasBlank = true
            } else {
                lastWasBlank = false
                folded.append((0x61...0x7A).contains(byte) ? byte - 0x20 : byte)
            }
        }
        if lastWasBlank, folded.last == 0x20 { folded.removeLast() }
        return folded
    }

    /// Apple's subject summary (`SecCertificateCopySubjectSummary`): every common name, else every
    /// organizational unit, else every organization, else every other printable attribute — the most
    /// wanted kind, the values joined ", " in reverse order; "CN (description)" when a description is
    /// present beside a common name. Nil when no attribute has text.
    static func summary(_ names: [[NameAttribute]]) -> String? {
        enum Kind: Int { case none, printable, organization, unit, commonName }
        var kind = Kind.none
        var summary: String?
        var description: String?
        for attribute in names.joined() {
            var candidate: Kind
            var text: String?
            switch attribute.type {
            case NameAttribute.commonName: candidate = .commonName
            case NameAttribute.organizationalUnitName: candidate = .unit
            case NameAttribute.organizationName: candidate = .organization
            case NameAttribute.descriptionName:
                candidate = .none
                if let found = attribute.text {
                    text = found
                    description = description.map { "\(found), \($0)" } ?? found
                    candidate = .printable
                }
            default: candidate = .printable
            }
            guard kind.rawValue <= candidate.rawValue, let value = text ?? attribute.text else { continue }
            if kind == candidate, let earlier = summary {
                summary = "\(value), \(earlier)"
            } else {
                summary = value
                kind = candidate
            }
        }
        if let description, kind == .commonName, let name = summary { summary = "\(name) (\(description))" }
        return summary
    }

    /// The values of every attribute of `type`, in order, that have text.
    static func values(_ names: [[NameAttribute]], type: [UInt8]) -> [String] {
        names.joined().filter { $0.type == type }.compactMap(\.text)
    }
}
