import Foundation
import LatchkeySSH
import Testing

/// Names a peer chooses are bytes, as OpenSSH reads them: a C string is any bytes but NUL; `match_pattern`
/// compares byte by byte (`?` is one byte, even inside a UTF-8 character); and a log line or a dialog shows
/// them escaped, so no name can start a line of its own or pass for another by its looks.
@Suite struct SSHPeerBytesTests {
    @Test func aCStringIsAnyBytesButNUL() throws {
        var writer = SSHWriter()
        writer.string([0x68, 0xFF, 0x62])
        writer.string([0x61, 0x00, 0x62])
        var reader = SSHReader(writer.data)
        #expect(try reader.cString("a principal") == Data([0x68, 0xFF, 0x62]))
        #expect(throws: SSHWireError("a principal holds a NUL byte")) { try reader.cString("a principal") }
    }

    @Test(arguments: [
        ([0x68, 0xFF, 0x62] as [UInt8], "h?b", true),
        ([0x68, 0xFF, 0x62], "h*", true),
        ([0x68, 0xFF, 0x62], "hb", false),
        (Array("h\u{E9}b".utf8), "h?b", false),  // é is two bytes: `?` is one.
        (Array("h\u{E9}b".utf8), "h??b", true),
        (Array("host-a".utf8), "host-a", true),
        (Array("host-a".utf8), "host-?", true),
        (Array("host-a".utf8), "*-b", false),
    ])
    func patternsMatchByteByByte(text: [UInt8], pattern: String, matches: Bool) {
        #expect(SSHPattern.matches(text, pattern: pattern.utf8) == matches)
    }

    @Test func displayEscapesAllButPrintableASCII() {
        #expect(SSHDisplay.escaped([0x68, 0xFF, 0x62]) == #"h\xffb"#)
        #expect(SSHDisplay.escaped("alice\nHost key: SHA256:x") == #"alice\x0aHost key: SHA256:x"#)
        #expect(SSHDisplay.escaped("a\\b\"c\u{7F}") == #"a\\b\"c\x7f"#)
        #expect(SSHDisplay.escaped("h\u{E9}") == #"h\xc3\xa9"#)
        #expect(SSHDisplay.escaped("git") == "git")
    }
}
