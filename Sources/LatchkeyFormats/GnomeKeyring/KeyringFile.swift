package import FoundationEssentials
import LatchkeyCrypto
import LatchkeyEngine
import LatchkeyPKI

/// GNOME Keyring's keyring file (`~/.local/share/keyrings/<name>.keyring`, the binary format gnome-keyring
/// writes for a keyring with a password: `pkcs11/secret-store/gkm-secret-binary.c`), read and written
/// without gnome-keyring-daemon.
///
/// Layout, integers big-endian, strings as a 32-bit length (0xFFFFFFFF for none) and UTF-8 bytes:
/// `GnomeKeyring\n\r\0\n`; major and minor version, crypto and hash (four zero bytes: AES-128, and the
/// "MD5" of the hashed attributes); the keyring's name; modified and created times (two 32-bit halves
/// each); flags; lock timeout; hash iterations; an 8-byte salt; four reserved words; the item count; per
/// item its id, type and attributes with string values hashed (MD5, lowercase hex: searchable while
/// locked); the encrypted part's length and the encrypted part. Its key and IV are the first and second
/// halves of SHA-256(password ‖ salt) rehashed until `iterations` digests were taken; AES-128-CBC without
/// padding over zero-padded blocks; inside, the MD5 of the rest, then per item its label, secret, created and
/// modified times, a reserved string and four words, its attributes in full and its access list.
package struct KeyringFile: Sendable, Hashable {
    /// One item.
    package struct Item: Sendable, Hashable {
        package var label: String
        package var secret: Data
        /// Its attributes, `xdg:schema` included (from the item's type when the file has none, as the daemon
        /// serves it); integer attributes in decimal.
        package var attributes: [String: String]
        package var created: Date
        package var modified: Date

        package init(label: String, secret: Data, attributes: [String: String], created: Date, modified: Date) {
            self.label = label
            self.secret = secret
            self.attributes = attributes
            self.created = created
            self.modified = modified
        }
    }

    /// The keyring's name, as the Secret Service shows it ("Login").
    package var name: String
    package var created: Date
    package var modified: Date
    package var items: [Item]

    package init(name: String, created: Date, modified: Date, items: [Item]) {
        self.name = name
        self.created = created
        self.modified = modified
        self.items = items
    }

    static let magic: [UInt8] = Array("GnomeKeyring\n\r".utf8) + [0, 10]

    /// Whether `bytes` start like a binary keyring file.
    package static func isKeyringFile(_ bytes: [UInt8]) -> Bool { bytes.starts(with: magic) }

    /// The most hash iterations a file may ask for: gnome-keyring writes 1,000 to 4,095, Latchkey's export
    /// 65,536; a million take about a third of a second.
    package static let maximumIterations: UInt32 = 1 << 20

    /// The item types of gnome-keyring's old API, by the schema names it shows for them.
    static let schemas: [UInt32: String] = [
        0: "org.freedesktop.Secret.Generic", 1: "org.gnome.keyring.NetworkPassword", 2: "org.gnome.keyring.Note",
        3: "org.gnome.keyring.ChainedKeyring", 4: "org.gnome.keyring.EncryptionKey",
        0x100: "org.gnome.keyring.PkStorage",
    ]

    /// The key and IV for `password` and `salt`.
    static func keyAndIV(_ password: Passphrase, salt: ArraySlice<UInt8>, iterations: UInt32) throws(KeychainError)
        -> (key: SecureBytes, iv: Data)
    {
        let digest = password.withUnsafeBytes { password in
            salt.withUnsafeBytes { salt in FormatPrimitives.iteratedSHA256([password, salt], iterations: iterations) }
        }
        guard let digest else { throw KeychainError(.internal, "SHA-256 failed in OpenSSL") }
        return digest.withUnsafeBytes { bytes in
            (
                SecureBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[0..<16])),
                Data(UnsafeRawBufferPointer(rebasing: bytes[16..<32]))
            )
        }
    }
}
