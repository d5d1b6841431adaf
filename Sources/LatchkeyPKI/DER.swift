/// One DER element: its tag and where its header and contents lie in the buffer it was read from.
struct DERElement: Sendable {
    /// The identifier octet (single-byte tags only; certificates use no others where Latchkey looks).
    let tag: UInt8
    /// Where the element begins (its tag).
    let start: Int
    /// Where its contents begin.
    let contentStart: Int
    /// Where it ends (one past its last content byte).
    let end: Int

    var contents: Range<Int> { contentStart..<end }
    var whole: Range<Int> { start..<end }
}

/// A definite-length DER element could not be read: the reason names the structure, never the bytes.
struct DERError: Error, Sendable {
    let reason: String
}

/// Reads consecutive DER elements from a range of bytes: definite lengths only, minimal to four length
/// bytes, every element inside the range.
struct DERReader {
    private let bytes: [UInt8]
    private(set) var position: Int
    private let end: Int

    init(_ bytes: [UInt8], range: Range<Int>? = nil) {
        self.bytes = bytes
        self.position = range?.lowerBound ?? 0
        self.end = range?.upperBound ?? bytes.count
    }

    var isAtEnd: Bool { position >= end }

    /// The next element; `DERError` when it is cut short, has an indefinite or oversized length, or a
    /// multi-byte tag.
    mutating func next() throws(DERError) -> DERElement {
        let start = position
        guard position < end else { throw DERError(reason: "a DER element was expected") }
        let tag = bytes[position]
        guard tag & 0x1F != 0x1F else { throw DERError(reason: "a multi-byte DER tag") }
        position += 1
        guard position < end else { throw DERError(reason: "a DER element without a length") }
        let first = bytes[position]
        position += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            let count = Int(first & 0x7F)
            guard count > 0 else { throw DERError(reason: "an indefinite DER length") }
            guard count <= 4, position + count <= end else { throw DERError(reason: "a DER length that does not fit") }
            for _ in 0..<count {
                length = length << 8 | Int(bytes[position])
                position += 1
            }
        }
        guard length <= end - position else { throw DERError(reason: "a DER element longer than its container") }
        let element = DERElement(tag: tag, start: start, contentStart: position, end: position + length)
        position += length
        return element
    }

    /// The next element, which must have `tag`.
    mutating func next(tag: UInt8, _ what: String) throws(DERError) -> DERElement {
        let element = try next()
        guard element.tag == tag else { throw DERError(reason: "\(what) has the wrong DER tag") }
        return element
    }
}

/// DER encoding helpers.
enum DER {
    static let sequence: UInt8 = 0x30
    static let set: UInt8 = 0x31
    static let integer: UInt8 = 0x02
    static let objectIdentifier: UInt8 = 0x06
    static let printableString: UInt8 = 0x13

    /// The minimal DER length octets for `length`.
    static func lengthOctets(_ length: Int) -> [UInt8] {
        if length < 0x80 { return [UInt8(length)] }
        var octets: [UInt8] = []
        var rest = length
        while rest > 0 {
            octets.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(octets.count)] + octets
    }

    /// A whole element: tag, minimal length, contents.
    static func element(_ tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
        [tag] + lengthOctets(contents.count) + contents
    }
}
