import Foundation

/// Reads structured values out of the fuzzer's bytes: each choice consumes bytes, and a drained input
/// yields zeros, so every byte string is a valid (if short) program.
struct FuzzInput {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ data: Data) { bytes = Array(data) }

    var isEmpty: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func int(below bound: Int) -> Int { bound <= 1 ? 0 : Int(byte()) % bound }

    mutating func pick<T>(_ choices: [T]) -> T { choices[int(below: choices.count)] }

    /// Up to `limit` bytes, the count read first.
    mutating func data(limit: Int = 64) -> Data {
        let count = min(int(below: limit + 1), bytes.count - min(offset, bytes.count))
        defer { offset += count }
        return Data(bytes[offset..<(offset + count)])
    }

    /// Text: one of `common`, or fuzzer bytes decoded as UTF-8 (invalid sequences repaired).
    mutating func text(_ common: [String]) -> String {
        byte() % 4 == 0 ? String(decoding: data(limit: 24), as: UTF8.self) : pick(common)
    }

    /// Everything not read yet.
    mutating func rest() -> Data {
        defer { offset = bytes.count }
        return offset < bytes.count ? Data(bytes[offset...]) : Data()
    }
}
