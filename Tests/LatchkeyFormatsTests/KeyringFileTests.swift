import Foundation
import LatchkeyEngine
import LatchkeyFormats
import Testing

/// The keyring file as Latchkey writes and reads it, and what is refused: a wrong password, another version,
/// truncation, counts and lengths past the end, hash iterations beyond the limit. (The files of the real
/// gnome-keyring-daemon: GnomeKeyringDaemonTests.)
@Suite struct KeyringFileTests {
    static let password = Passphrase("keyring password")
    static let keyring = KeyringFile(
        name: "Login", created: Date(timeIntervalSince1970: 1_600_000_000),
        modified: Date(timeIntervalSince1970: 1_700_000_000),
        items: [
            KeyringFile.Item(
                label: "Mail ✓", secret: Data("one".utf8),
                attributes: ["service": "mail", "user": "ålice", "xdg:schema": "org.freedesktop.Secret.Generic"],
                created: Date(timeIntervalSince1970: 1_650_000_000),
                modified: Date(timeIntervalSince1970: 1_660_000_000)),
            KeyringFile.Item(
                label: "", secret: Data([0, 1, 0xFF]), attributes: [:], created: Date(timeIntervalSince1970: 0),
                modified: Date(timeIntervalSince1970: 0)),
            KeyringFile.Item(
                label: "Network", secret: Data(),
                attributes: ["server": "example.com", "xdg:schema": "org.gnome.keyring.NetworkPassword"],
                created: Date(timeIntervalSince1970: 5), modified: Date(timeIntervalSince1970: 6)),
        ])

    @Test func whatIsWrittenReadsBackTheSame() throws {
        let bytes = try Self.keyring.written(password: Self.password, iterations: 1000)
        var expected = Self.keyring
        // An item without a schema gets the one of its type (generic) back, as the daemon shows it.
        expected.items[1].attributes["xdg:schema"] = "org.freedesktop.Secret.Generic"
        #expect(try KeyringFile.read(bytes, password: Self.password) == expected)
        // Nothing of the items is in the clear, hashed attribute values aside.
        for word in ["Mail ✓", "ålice", "one", "Network"] {
            #expect(Data(bytes).range(of: Data(word.utf8)) == nil, "\(word)")
        }
    }

    @Test func aWrongPasswordIsAuthFailed() throws {
        let bytes = try Self.keyring.written(password: Self.password, iterations: 1000)
        #expect(
            throws: KeychainError(.authFailed, "wrong password for the keyring file (or its encrypted part is damaged)")
        ) { try KeyringFile.read(bytes, password: Passphrase("not it")) }
        // A changed byte of the encrypted part reads the same way: the format has only its MD5 to tell.
        var changed = bytes
        changed[changed.count - 20] ^= 1
        #expect(throws: KeychainError.self) { try KeyringFile.read(changed, password: Self.password) }
    }

    @Test func damagedAndHostileFilesAreRefusedWithoutReadingPastTheEnd() throws {
        let bytes = try Self.keyring.written(password: Self.password, iterations: 1000)
        #expect(
            throws: KeychainError.decode(
                "the keyring file is not a GNOME Keyring keyring file (it does not start with GnomeKeyring)")
        ) { try KeyringFile.read(Array("[keyring]\n".utf8), password: Self.password) }
        var version = bytes
        version[16] = 1
        #expect(throws: KeychainError.decode("the keyring file has version 1.0.0.0, not 0.0 with AES and MD5")) {
            try KeyringFile.read(version, password: Self.password)
        }
        // Every truncation is refused, none crashes.
        for length in stride(from: 0, to: bytes.count, by: 7) {
            #expect(throws: KeychainError.self) {
                try KeyringFile.read(Array(bytes.prefix(length)), password: Self.password)
            }
        }
        // The name's length: past the end of the file.
        var name = bytes
        name.replaceSubrange(20..<24, with: [0x7F, 0xFF, 0xFF, 0xF0])
        #expect(
            throws: KeychainError.decode(
                "the keyring file is truncated: the keyring's name at byte 24 runs past its end")
        ) { try KeyringFile.read(name, password: Self.password) }
        // Hash iterations beyond the limit: refused before any hashing.
        let iterations = 20 + 4 + 5 + 16 + 8
        var costly = bytes
        costly.replaceSubrange(iterations..<iterations + 4, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(
            throws: KeychainError.param(
                "the keyring file asks for 4294967295 hash iterations; at most 1048576 are derived")
        ) { try KeyringFile.read(costly, password: Self.password) }
        // An item count no file of this size can hold.
        let count = iterations + 4 + 8 + 16
        var many = bytes
        many.replaceSubrange(count..<count + 4, with: [0x10, 0, 0, 0])
        #expect(
            throws: KeychainError.decode(
                "the keyring file declares 268435456 items, more than its \(bytes.count) bytes hold")
        ) { try KeyringFile.read(many, password: Self.password) }
    }

    @Test func textWithANulCharacterIsRefusedWhenWriting() throws {
        var keyring = Self.keyring
        keyring.items[0].label = "a\u{0}b"
        #expect(throws: KeychainError.param("item 1 (\"a\u{0}b\")'s label holds a NUL character")) {
            try keyring.written(password: Self.password)
        }
    }
}
