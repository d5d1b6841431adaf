import Foundation
import LatchkeyCrypto
import LatchkeySSH
import Testing

/// bcrypt_pbkdf, written from its description, gives OpenBSD's published test vectors (its regress suite's,
/// reproduced by every other implementation); bad parameters are refused, not computed.
@Suite struct BcryptPBKDFTests {
    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    static func derive(_ passphrase: [UInt8], _ salt: [UInt8], rounds: Int, length: Int) -> [UInt8]? {
        BcryptPBKDF.derive(
            passphrase: SecureBytes(copying: passphrase), salt: Data(salt), rounds: rounds, length: length
        )
        .map { $0.withUnsafeBytes { Array($0) } }
    }

    @Test(
        arguments: [
            (
                Array("password".utf8), Array("salt".utf8), 4,
                "5bbf0cc293587f1c3635555c27796598d47e579071bf427e9d8fbe842aba34d9"
            ),
            (Array("password".utf8), [0], 4, "c12b566235eee04c212598970a579a67"),
            ([0], Array("salt".utf8), 4, "6051be18c2f4f82cbf0efee5471b4bb9"),
            (
                Array("password\0".utf8), Array("salt\0".utf8), 4,
                "7410e44cf4fa07bfaac8a928b1727fac001375e7bf7384370f48efd121743050"
            ),
        ] as [([UInt8], [UInt8], Int, String)])
    func openBSDsVectors(passphrase: [UInt8], salt: [UInt8], rounds: Int, expected: String) {
        let wanted = Self.hex(expected)
        #expect(Self.derive(passphrase, salt, rounds: rounds, length: wanted.count) == wanted)
    }

    @Test func aLongerKeyIsSpreadOverBlocks() throws {
        // The 48 bytes aes256-ctr needs: two blocks whose bytes interleave, so the first 32 are not the 32-byte key.
        let long = try #require(Self.derive(Array("password".utf8), Array("salt".utf8), rounds: 4, length: 48))
        let short = try #require(Self.derive(Array("password".utf8), Array("salt".utf8), rounds: 4, length: 32))
        #expect(long.count == 48)
        #expect(Array(long.prefix(32)) != short)
        #expect(long[0] == short[0])  // Byte 0 of block 1 lands first either way.
    }

    @Test func badParametersAreRefused() {
        #expect(Self.derive([1], [1], rounds: 0, length: 32) == nil)
        #expect(Self.derive([1], [], rounds: 4, length: 32) == nil)
        #expect(Self.derive([1], [1], rounds: 4, length: 0) == nil)
        #expect(Self.derive([1], [1], rounds: 4, length: 1_025) == nil)
    }
}
