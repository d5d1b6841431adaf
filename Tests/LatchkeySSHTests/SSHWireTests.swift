import Foundation
import LatchkeyCrypto
import LatchkeySSH
import Testing

/// RFC 4251 §5's wire types as the agent reads and writes them: big-endian integers, length-prefixed strings,
/// non-negative `mpint`s in their one canonical form, and every length checked against what is left, with a
/// message that names the field and never shows its bytes.
@Suite struct SSHWireTests {
    @Test func integersAreBigEndian() throws {
        var writer = SSHWriter()
        writer.uint32(0x0102_0304)
        writer.uint64(0x0A0B_0C0D_0E0F_1011)
        writer.boolean(true)
        writer.byte(0xFE)
        #expect(Array(writer.data) == [1, 2, 3, 4, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 1, 0xFE])
        var reader = SSHReader(writer.data)
        #expect(try reader.uint32() == 0x0102_0304)
        #expect(try reader.uint64() == 0x0A0B_0C0D_0E0F_1011)
        #expect(try reader.boolean() == true)
        #expect(try reader.byte() == 0xFE)
        #expect(reader.isAtEnd)
    }

    @Test func anyNonZeroByteIsTrue() throws {
        var reader = SSHReader(Data([0, 1, 0x80]))
        #expect(try reader.boolean() == false)
        #expect(try reader.boolean() == true)
        #expect(try reader.boolean() == true)
    }

    @Test func shortReadsNameTheField() throws {
        var reader = SSHReader(Data([0, 0, 1]))
        #expect(throws: SSHWireError("the flags is cut short")) { try reader.uint32("the flags") }
        var empty = SSHReader(Data())
        #expect(throws: SSHWireError("the message type is missing")) { try empty.byte("the message type") }
        // A length past the end is refused before anything is copied.
        var long = SSHReader(Data([0xFF, 0xFF, 0xFF, 0xFF, 0x61]))
        #expect(throws: SSHWireError("the key is longer than the message (4294967295 bytes)")) {
            try long.string("the key")
        }
        var secret = SSHReader(Data([0, 0, 0, 9, 0x61]))
        #expect(throws: SSHWireError("the passphrase is longer than the message (9 bytes)")) {
            try secret.secretString("the passphrase")
        }
    }

    @Test func stringsRoundTrip() throws {
        var writer = SSHWriter()
        writer.string("ssh-ed25519")
        writer.string(Data())
        writer.string([0x00, 0xFF])
        var reader = SSHReader(writer.data)
        #expect(try reader.text() == "ssh-ed25519")
        #expect(try reader.string() == Data())
        #expect(try reader.string() == Data([0x00, 0xFF]))
        try reader.expectEnd("the strings")
    }

    @Test func textIsUTF8WithoutNUL() throws {
        var writer = SSHWriter()
        writer.string([0xC3, 0x28])
        writer.string([0x61, 0x00])
        writer.string("h\u{E9}")
        var reader = SSHReader(writer.data)
        #expect(throws: SSHWireError("the comment is not UTF-8 text")) { try reader.text("the comment") }
        #expect(throws: SSHWireError("the comment is not UTF-8 text")) { try reader.text("the comment") }
        #expect(try reader.text("the comment") == "h\u{E9}")
    }

    @Test func leftoverBytesAreAnError() throws {
        var reader = SSHReader(Data([0, 0, 0, 0, 7, 7]))
        _ = try reader.string()
        #expect(reader.remaining == 2)
        #expect(throws: SSHWireError("2 bytes follow the request")) { try reader.expectEnd("the request") }
        #expect(reader.rest() == Data([7, 7]))
        #expect(reader.isAtEnd)
    }

    @Test func nestedStringsAreReadersOfTheirOwn() throws {
        var inner = SSHWriter()
        inner.string("a")
        inner.uint32(5)
        var outer = SSHWriter()
        outer.string(inner.data)
        outer.byte(9)
        var reader = SSHReader(outer.data)
        var nested = try reader.nested("the constraint")
        #expect(try nested.text() == "a")
        #expect(try nested.uint32() == 5)
        #expect(nested.isAtEnd)
        // The nested reader ends where its string ends: it cannot read its parent's bytes.
        #expect(throws: SSHWireError("a byte is missing")) { try nested.byte() }
        #expect(try reader.byte() == 9)
    }

    @Test func anMPIntHasOneForm() throws {
        var writer = SSHWriter()
        writer.positiveInteger([0x00, 0x00, 0x7F])  // Leading zeros go.
        writer.positiveInteger([0x80, 0x01])  // A set top bit gets one zero back.
        writer.positiveInteger([0x00])  // Zero is the empty string.
        #expect(
            Array(writer.data) == [0, 0, 0, 1, 0x7F, 0, 0, 0, 3, 0x00, 0x80, 0x01, 0, 0, 0, 0])
        var reader = SSHReader(writer.data)
        #expect(try reader.positiveInteger() == Data([0x7F]))
        #expect(try reader.positiveInteger() == Data([0x80, 0x01]))
        #expect(try reader.positiveInteger() == Data())
    }

    @Test func negativeAndPaddedMPIntsAreRefused() throws {
        var writer = SSHWriter()
        writer.string([0x80, 0x01])
        writer.string([0x00, 0x01])
        writer.string([0xFF])
        var reader = SSHReader(writer.data)
        #expect(throws: SSHWireError("the modulus is negative")) { try reader.positiveInteger("the modulus") }
        #expect(throws: SSHWireError("the modulus has a needless leading zero")) {
            try reader.positiveInteger("the modulus")
        }
        #expect(throws: SSHWireError("the scalar is negative")) { try reader.secretInteger("the scalar") }
    }

    @Test func secretsAreReadIntoZeroizingBuffers() throws {
        var writer = SSHWriter()
        writer.string([0x00, 0x00, 0x42, 0x43])
        writer.string("hunter2")
        var reader = SSHReader(writer.data)
        let scalar = try reader.secretInteger("the scalar")
        #expect(scalar.count == 2)
        #expect(scalar.withUnsafeBytes { Array($0) } == [0x42, 0x43])
        let passphrase = try reader.secretString("the passphrase")
        #expect(passphrase.withUnsafeBytes { Array($0) } == Array("hunter2".utf8))
        #expect(reader.isAtEnd)
    }
}
