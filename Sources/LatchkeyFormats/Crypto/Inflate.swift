package import LatchkeyEngine

/// DEFLATE (RFC 1951) decompression and the gzip container around it (RFC 1952), for KeePass databases,
/// which KeePassXC writes gzip-compressed by default. Bounded: the output stops at `limit` bytes with
/// `errSecDecode`, so a small file that inflates to gigabytes is refused, not held. Written after RFC 1951's
/// description (canonical Huffman codes decoded a code length at a time, as zlib's `puff` does).
package enum Inflate {
    /// The decompressed bytes of a gzip member (`1F 8B`), its CRC-32 and length checked.
    package static func gunzip(_ input: [UInt8], limit: Int, what: String) throws(KeychainError) -> [UInt8] {
        var reader = FieldReader(input, what: what)
        guard try reader.byte("the gzip magic") == 0x1F, try reader.byte("the gzip magic") == 0x8B,
            try reader.byte("the gzip method") == 8
        else { throw KeychainError.decode("\(what) is not gzip-compressed DEFLATE data") }
        let flags = try reader.byte("the gzip flags")
        try reader.skip(6, "the gzip header")
        if flags & 0x04 != 0 {
            try reader.skip(Int(try reader.uint16LE("the gzip extra field")), "the gzip extra field")
        }
        for flag in [UInt8(0x08), 0x10] where flags & flag != 0 {
            while try reader.byte("a gzip name or comment") != 0 {}
        }
        if flags & 0x02 != 0 { try reader.skip(2, "the gzip header checksum") }
        var output: [UInt8] = []
        let consumed = try inflate(input, from: reader.offset, into: &output, limit: limit, what: what)
        var trailer = FieldReader(input, offset: consumed, what: what)
        let crc = try trailer.uint32LE("the gzip CRC-32")
        let size = try trailer.uint32LE("the gzip length")
        guard crc == CRC32.checksum(output), size == UInt32(truncatingIfNeeded: output.count) else {
            throw KeychainError.decode("\(what) fails its gzip CRC-32 check")
        }
        return output
    }

    /// Inflates the raw DEFLATE stream at `start` of `input`, appending to `output`; the offset just past
    /// the stream's last byte.
    package static func inflate(_ input: [UInt8], from start: Int, into output: inout [UInt8], limit: Int, what: String)
        throws(KeychainError) -> Int
    {
        var state = InflateState(input: input, position: start, limit: limit, what: what)
        try state.run(&output)
        return state.position
    }
}

/// A canonical Huffman code: how many codes of each length, and the symbols in code order.
struct HuffmanCode {
    var counts = [Int](repeating: 0, count: 16)
    var symbols: [Int] = []

    /// The code for `lengths` (0: the symbol is unused); nil for an over-subscribed set, or an incomplete
    /// one unless it has a single code (which RFC 1951 allows for distances) or `incomplete` allows it (the
    /// fixed distance code: 30 codes of 5 bits).
    init?(lengths: ArraySlice<Int>, incomplete: Bool = false) {
        for length in lengths { counts[length] += 1 }
        var left = 1
        for length in 1..<16 {
            left <<= 1
            left -= counts[length]
            if left < 0 { return nil }
        }
        var offsets = [Int](repeating: 0, count: 16)
        for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
        symbols = [Int](repeating: 0, count: lengths.count)
        for (symbol, length) in lengths.enumerated() where length != 0 {
            symbols[offsets[length]] = symbol
            offsets[length] += 1
        }
        let used = lengths.count - counts[0]
        if left > 0 && used > 1 && !incomplete { return nil }
    }
}

struct InflateState {
    let input: [UInt8]
    var position: Int
    let limit: Int
    let what: String
    var bitBuffer = 0
    var bitCount = 0

    init(input: [UInt8], position: Int, limit: Int, what: String) {
        self.input = input
        self.position = position
        self.limit = limit
        self.what = what
    }

    func damaged(_ detail: String) -> KeychainError { KeychainError.decode("\(what): \(detail)") }

    mutating func bits(_ count: Int) throws(KeychainError) -> Int {
        var value = bitBuffer
        while bitCount < count {
            guard position < input.count else { throw damaged("the compressed data ends early") }
            value |= Int(input[position]) << bitCount
            position += 1
            bitCount += 8
        }
        bitBuffer = value >> count
        bitCount -= count
        return value & ((1 << count) - 1)
    }

    mutating func decode(_ code: HuffmanCode) throws(KeychainError) -> Int {
        var value = 0
        var first = 0
        var index = 0
        for length in 1..<16 {
            value |= try bits(1)
            let count = code.counts[length]
            if value - count < first { return code.symbols[index + (value - first)] }
            index += count
            first += count
            first <<= 1
            value <<= 1
        }
        throw damaged("a Huffman code is not in its table")
    }

    static let lengthBase = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227,
        258,
    ]
    static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let distanceBase = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097,
        6145, 8193, 12289, 16385, 24577,
    ]
    static let distanceExtra = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13,
    ]
    static let fixed: (HuffmanCode, HuffmanCode) = {
        var lengths = [Int](repeating: 8, count: 288)
        for symbol in 144..<256 { lengths[symbol] = 9 }
        for symbol in 256..<280 { lengths[symbol] = 7 }
        // Both are valid codes by RFC 1951's definition: built from constants, they cannot fail.
        return (
            HuffmanCode(lengths: lengths[...])!,
            HuffmanCode(lengths: [Int](repeating: 5, count: 30)[...], incomplete: true)!
        )
    }()
    static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    mutating func run(_ output: inout [UInt8]) throws(KeychainError) {
        var last = false
        while !last {
            last = try bits(1) == 1
            switch try bits(2) {
            case 0: try stored(&output)
            case 1: try codes(&output, Self.fixed.0, Self.fixed.1)
            case 2:
                let (literals, distances) = try dynamicCodes()
                try codes(&output, literals, distances)
            default: throw damaged("a block of the reserved type 3")
            }
        }
    }

    mutating func stored(_ output: inout [UInt8]) throws(KeychainError) {
        bitBuffer = 0
        bitCount = 0
        guard position + 4 <= input.count else { throw damaged("the compressed data ends early") }
        let length = Int(input[position]) | Int(input[position + 1]) << 8
        let complement = Int(input[position + 2]) | Int(input[position + 3]) << 8
        guard length == ~complement & 0xFFFF else { throw damaged("a stored block's length fails its check") }
        position += 4
        guard position + length <= input.count else { throw damaged("the compressed data ends early") }
        guard output.count + length <= limit else { throw damaged("it inflates to more than \(limit) bytes") }
        output.append(contentsOf: input[position..<position + length])
        position += length
    }

    mutating func dynamicCodes() throws(KeychainError) -> (HuffmanCode, HuffmanCode) {
        let literalCount = try bits(5) + 257
        let distanceCount = try bits(5) + 1
        let lengthCount = try bits(4) + 4
        guard literalCount <= 286, distanceCount <= 30 else { throw damaged("a block declares too many codes") }
        var lengths = [Int](repeating: 0, count: 19)
        for index in 0..<lengthCount { lengths[Self.codeLengthOrder[index]] = try bits(3) }
        guard let lengthCode = HuffmanCode(lengths: lengths[...]) else {
            throw damaged("a code-length code is invalid")
        }
        var all: [Int] = []
        while all.count < literalCount + distanceCount {
            let symbol = try decode(lengthCode)
            if symbol < 16 {
                all.append(symbol)
                continue
            }
            var repeated = 0
            let count: Int
            switch symbol {
            case 16:
                guard let previous = all.last else { throw damaged("a length repeats none before it") }
                repeated = previous
                count = 3 + (try bits(2))
            case 17: count = 3 + (try bits(3))
            default: count = 11 + (try bits(7))
            }
            guard all.count + count <= literalCount + distanceCount else { throw damaged("code lengths overrun") }
            all.append(contentsOf: repeatElement(repeated, count: count))
        }
        guard all[256] != 0 else { throw damaged("a block has no end-of-block code") }
        guard let literals = HuffmanCode(lengths: all[0..<literalCount]),
            let distances = HuffmanCode(lengths: all[literalCount...])
        else { throw damaged("a block's Huffman code is invalid") }
        return (literals, distances)
    }

    mutating func codes(_ output: inout [UInt8], _ literals: HuffmanCode, _ distances: HuffmanCode)
        throws(KeychainError)
    {
        while true {
            let symbol = try decode(literals)
            if symbol < 256 {
                guard output.count < limit else { throw damaged("it inflates to more than \(limit) bytes") }
                output.append(UInt8(symbol))
                continue
            }
            if symbol == 256 { return }
            let index = symbol - 257
            guard index < 29 else { throw damaged("a length code is out of range") }
            let length = Self.lengthBase[index] + (try bits(Self.lengthExtra[index]))
            let distanceSymbol = try decode(distances)
            guard distanceSymbol < 30 else { throw damaged("a distance code is out of range") }
            let distance = Self.distanceBase[distanceSymbol] + (try bits(Self.distanceExtra[distanceSymbol]))
            guard distance <= output.count else { throw damaged("a distance points before the start") }
            guard output.count + length <= limit else { throw damaged("it inflates to more than \(limit) bytes") }
            let start = output.count - distance
            for offset in 0..<length { output.append(output[start + offset]) }
        }
    }
}

/// CRC-32 (ISO 3309, as gzip uses it).
enum CRC32 {
    static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 != 0 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        table.withUnsafeBufferPointer { table in
            for byte in bytes { crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        }
        return crc ^ 0xFFFF_FFFF
    }
}
