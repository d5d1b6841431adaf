import Foundation
import LatchkeyEngine
import LatchkeyFormats
import LatchkeyTestSupport
import Testing

/// DEFLATE and gzip against Debian's `gzip` (stored, fixed and dynamic blocks at every level), and what is
/// refused: output beyond the limit (a small file inflating to gigabytes), a wrong CRC, damage anywhere.
@Suite struct InflateTests {
    func gzip(_ data: Data, level: Int) throws -> [UInt8] {
        let output = try HelperProcess.run(
            "/bin/gzip", ["-c", "-\(level)", "-n"], environment: ["PATH": "/bin:/usr/bin"], input: data)
        precondition(output.status == 0, output.stderr)
        return [UInt8](output.stdoutBytes)
    }

    static func samples() -> [Data] {
        var generator = SystemRandomNumberGenerator()
        let random = Data((0..<70_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let text = Data(
            String(
                repeating: "<Entry><String><Key>Title</Key><Value>Ünïcødé ✓</Value></String></Entry>\n", count: 3_000
            ).utf8)
        return [Data(), Data("a".utf8), random, text, Data(count: 200_000)]
    }

    @Test(arguments: [1, 6, 9]) func whatGzipCompressesInflatesBack(level: Int) throws {
        for sample in Self.samples() {
            let compressed = try gzip(sample, level: level)
            #expect(Data(try Inflate.gunzip(compressed, limit: 1 << 20, what: "the data")) == sample)
        }
    }

    @Test func outputBeyondTheLimitIsRefused() throws {
        let bomb = try gzip(Data(count: 64 << 20), level: 9)
        #expect(bomb.count < 100_000)
        #expect(throws: KeychainError.decode("the data: it inflates to more than 1048576 bytes")) {
            try Inflate.gunzip(bomb, limit: 1 << 20, what: "the data")
        }
    }

    @Test func damageIsRefusedWithoutACrash() throws {
        let compressed = try gzip(Self.samples()[3], level: 6)
        var crc = compressed
        crc[crc.count - 8] ^= 1
        #expect(throws: KeychainError.decode("the data fails its gzip CRC-32 check")) {
            try Inflate.gunzip(crc, limit: 1 << 20, what: "the data")
        }
        #expect(throws: KeychainError.decode("the data is not gzip-compressed DEFLATE data")) {
            try Inflate.gunzip([0x1F, 0x8C, 8, 0], limit: 1 << 20, what: "the data")
        }
        for index in stride(from: 10, to: compressed.count - 8, by: 97) {
            var damaged = compressed
            damaged[index] ^= 0x5A
            #expect(throws: KeychainError.self) { try Inflate.gunzip(damaged, limit: 1 << 20, what: "the data") }
        }
        for length in stride(from: 0, to: compressed.count, by: 501) {
            #expect(throws: KeychainError.self) {
                try Inflate.gunzip(Array(compressed.prefix(length)), limit: 1 << 20, what: "the data")
            }
        }
    }
}
