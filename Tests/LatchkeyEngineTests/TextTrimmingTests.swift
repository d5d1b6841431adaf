import Foundation
import LatchkeyEngine
import Testing

/// The engine's own trimming and path arithmetic give what Foundation's `trimmingCharacters(in:)` and
/// `NSString.deletingLastPathComponent` give, which they replace.
@Suite struct TextTrimmingTests {
    private static let samples = [
        "", " ", "\t\n", "word", "  two words  ", "\tline\n", "\u{00A0}nbsp\u{2003}", "\u{2028}x\u{2029}",
        "\r\nlogin.keychain\r\n", "\u{85}next\u{85}", " é ", "a\u{0301} ",
    ]

    @Test func trimmingMatchesFoundation() {
        for text in Self.samples {
            #expect(
                text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines),
                "\(text.debugDescription)")
            #expect(
                text.trimmingWhitespace(newlines: false) == text.trimmingCharacters(in: .whitespaces),
                "\(text.debugDescription)")
        }
    }

    @Test func theParentDirectoryMatchesFoundation() {
        // swift-corelibs-foundation traps on a relative name without a parent ("a", "a/"): asserted apart.
        #expect(FileSystem.parentDirectory(of: "a") == "")
        #expect(FileSystem.parentDirectory(of: "a/") == "")
        for path in ["/a/b/c", "/a/b/c/", "/a", "/", "a/b", "/a//b", "//a", "", "/a/b//"] {
            #expect(
                FileSystem.parentDirectory(of: path) == (path as NSString).deletingLastPathComponent,
                "\(path.debugDescription)")
        }
    }
}

/// `FileSystem.standardizedPath` gives what `URL(fileURLWithPath:).standardizedFileURL.path` gives.
@Suite struct StandardizedPathTests {
    @Test func standardizingMatchesFoundation() {
        for path in [
            "/a/b/c", "/a/./b", "/a/../b", "/a/b/../../c", "/../a", "/a//b", "/a/b/", "/", "relative/file", "./x",
            "../up", "/tmp/latchkey/agent.sock", "/a/b/..", "/a/.hidden/./f", "/a/...", "/a/..b/c", "/a/.b/../c",
            "//", "///a///b//", "/é/../ü/ß", "/日本/./語/..", "/a/b/../../../..", ".", "..",
        ] {
            #expect(
                FileSystem.standardizedPath(path) == URL(fileURLWithPath: path).standardizedFileURL.path,
                "\(path.debugDescription)")
        }
    }
}
