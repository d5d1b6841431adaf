import Foundation
import LatchkeyCrypto
import Testing

/// `Hex`: the one hexadecimal encoder and decoder.
@Suite struct HexTests {
    @Test func bytesEncodeInEitherCaseAndDecodeBack() {
        let bytes: [UInt8] = [0x00, 0x0F, 0xA5, 0xFF]
        #expect(Hex.encode(bytes) == "000fa5ff")
        #expect(Hex.encode(bytes, uppercase: true) == "000FA5FF")
        #expect(Hex.decode("000fa5ff") == bytes)
        #expect(Hex.decode("000FA5ff") == bytes)
        #expect(Hex.decode("x000fa5ffx".dropFirst().dropLast()) == bytes)
        #expect(Hex.encode([UInt8]()) == "")
        #expect(Hex.decode("") == [])
    }

    @Test func everyKindOfSequenceEncodesTheSame() {
        let all = (0...255).map(UInt8.init)
        let expected = all.map { String(format: "%02x", $0) }.joined()
        // Contiguous storage (an array, `Data`, a slice of `Data` not starting at 0) and a sequence without it.
        #expect(Hex.encode(all) == expected)
        #expect(Hex.encode(Data(all)) == expected)
        let data = Data([0xEE] + all)
        #expect(Hex.encode(data.dropFirst()) == expected)
        #expect(Hex.encode(data[1..<3]) == "0001")
        #expect(Hex.encode(all.lazy.map { $0 }) == expected)
        #expect(
            Hex.encode(stride(from: 250, through: 255, by: 1).lazy.map(UInt8.init), uppercase: true) == "FAFBFCFDFEFF")
        #expect(Hex.encode(Data()) == "")
    }

    @Test func oddLengthsAndNonDigitsAreRefused() {
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("0g") == nil)
        #expect(Hex.decode("0 ") == nil)
        #expect(Hex.decode("é0") == nil)
    }
}
