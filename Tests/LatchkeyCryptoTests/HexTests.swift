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

    @Test func oddLengthsAndNonDigitsAreRefused() {
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("0g") == nil)
        #expect(Hex.decode("0 ") == nil)
        #expect(Hex.decode("é0") == nil)
    }
}
