import FoundationEssentials
import LatchkeyCrypto
package import LatchkeyEngine
import LatchkeyPKI

extension KeyringFile {
    /// Reads a keyring file with its password: `errSecAuthFailed` for a wrong password (or a damaged
    /// encrypted part: the format cannot tell them apart), `errSecDecode` for a file that is not one or is
    /// damaged, `errSecParam` for one asking for more than `maximumIterations`. Nothing of the file is kept
    /// when it fails.
    package static func read(_ bytes: [UInt8], password: Passphrase, maximumIterations: UInt32 = maximumIterations)
        throws(KeychainError) -> KeyringFile
    {
        let what = "the keyring file"
        guard isKeyringFile(bytes) else {
            throw KeychainError.decode(
                "\(what) is not a GNOME Keyring keyring file (it does not start with GnomeKeyring)")
        }
        var reader = FieldReader(bytes, offset: magic.count, what: what)
        let version = try reader.take(4, "the version")
        guard version.allSatisfy({ $0 == 0 }) else {
            throw KeychainError.decode(
                "\(what) has version \(version.map(String.init).joined(separator: ".")), not 0.0 with AES and MD5")
        }
        let name = try string(&reader, "the keyring's name") ?? ""
        let modified = try time(&reader, "the keyring's modification time")
        let created = try time(&reader, "the keyring's creation time")
        try reader.skip(8, "the flags and lock timeout")
        let iterations = try reader.uint32BE("the hash iterations")
        guard (1...maximumIterations).contains(iterations) else {
            throw KeychainError.param(
                "\(what) asks for \(iterations) hash iterations; at most \(maximumIterations) are derived")
        }
        let salt = try reader.take(8, "the salt")
        try reader.skip(16, "the reserved words")
        let count = Int(try reader.uint32BE("the item count"))
        // Each item takes at least 12 bytes in the hashed part: a count beyond that is a damaged file.
        guard count <= reader.remaining / 12 else {
            throw KeychainError.decode("\(what) declares \(count) items, more than its \(bytes.count) bytes hold")
        }
        var types: [UInt32] = []
        for index in 0..<count {
            _ = try reader.uint32BE("item \(index + 1)'s id")
            types.append(try reader.uint32BE("item \(index + 1)'s type"))
            _ = try attributes(&reader, "item \(index + 1)'s hashed attributes")
        }
        let size = Int(try reader.uint32BE("the encrypted part's length"))
        guard size % 16 == 0, size >= 16, size <= reader.remaining else {
            throw KeychainError.decode(
                "\(what) declares an encrypted part of \(size) bytes; \(reader.remaining) are left, in whole 16-byte blocks"
            )
        }
        let encrypted = try reader.take(size, "the encrypted part")
        let (key, iv) = try keyAndIV(password, salt: salt, iterations: iterations)
        guard
            let plain = encrypted.withUnsafeBytes({
                FormatPrimitives.aesCBC(encrypt: false, key: key, iv: iv, input: $0, padding: false)
            })
        else { throw KeychainError(.internal, "AES-128-CBC failed in OpenSSL") }
        var decrypted = plain.withUnsafeBytes { Array($0) }
        defer { wipe(&decrypted) }
        let checksum = decrypted.withUnsafeBytes {
            FormatPrimitives.md5([UnsafeRawBufferPointer(rebasing: $0[16...])])
        }
        guard constantTimeEqual(checksum, Data(decrypted[0..<16])) else {
            throw KeychainError(.authFailed, "wrong password for \(what) (or its encrypted part is damaged)")
        }
        var inner = FieldReader(decrypted, offset: 16, what: "\(what)'s encrypted part")
        var items: [Item] = []
        for index in 0..<count {
            let item = "item \(index + 1)'s"
            let label = try string(&inner, "\(item) label") ?? ""
            let secret = try byteArray(&inner, "\(item) secret")
            let created = try time(&inner, "\(item) creation time")
            let modified = try time(&inner, "\(item) modification time")
            _ = try string(&inner, "\(item) reserved string")
            try inner.skip(16, "\(item) reserved words")
            var attributes = try attributes(&inner, "\(item) attributes")
            try skipAccessList(&inner, "\(item) access list")
            if attributes["xdg:schema"] == nil, let schema = schemas[types[index] & 0xFFFF] {
                attributes["xdg:schema"] = schema
            }
            items.append(
                Item(label: label, secret: secret, attributes: attributes, created: created, modified: modified))
        }
        return KeyringFile(name: name, created: created, modified: modified, items: items)
    }

    /// A string: nil for none; `errSecDecode` for a length past the end, a NUL or text that is not UTF-8.
    static func string(_ reader: inout FieldReader, _ field: String) throws(KeychainError) -> String? {
        let length = try reader.uint32BE(field)
        if length == 0xFFFF_FFFF { return nil }
        guard length < 0x7FFF_FFFF, Int(length) <= reader.remaining else { throw reader.truncated(field) }
        let bytes = try reader.take(Int(length), field)
        guard !bytes.contains(0), let text = String(validating: bytes, as: UTF8.self) else {
            throw KeychainError.decode("\(field) is not UTF-8 text")
        }
        return text
    }

    static func byteArray(_ reader: inout FieldReader, _ field: String) throws(KeychainError) -> Data {
        let length = try reader.uint32BE(field)
        if length == 0xFFFF_FFFF { return Data() }
        guard length < 0x7FFF_FFFF, Int(length) <= reader.remaining else { throw reader.truncated(field) }
        return Data(try reader.take(Int(length), field))
    }

    static func time(_ reader: inout FieldReader, _ field: String) throws(KeychainError) -> Date {
        let high = UInt64(try reader.uint32BE(field))
        let low = UInt64(try reader.uint32BE(field))
        // Seconds since 1970 as a signed 64-bit time_t; anything beyond year 9999 is read as 1970.
        let seconds = Int64(bitPattern: high << 32 | low)
        let bound: Int64 = 253_402_300_800
        return Date(timeIntervalSince1970: seconds > -bound && seconds < bound ? Double(seconds) : 0)
    }

    /// Attributes: their count, then per attribute its name, its type (0 text, 1 a 32-bit integer) and value.
    static func attributes(_ reader: inout FieldReader, _ field: String) throws(KeychainError) -> [String: String] {
        let count = Int(try reader.uint32BE(field))
        guard count <= reader.remaining / 8 else {
            throw KeychainError.decode("\(field): \(count) declared, more than the file holds")
        }
        var attributes: [String: String] = [:]
        for _ in 0..<count {
            guard let name = try string(&reader, field) else {
                throw KeychainError.decode("\(field): a name is missing")
            }
            switch try reader.uint32BE(field) {
            case 0: attributes[name] = try string(&reader, field) ?? ""
            case 1: attributes[name] = String(try reader.uint32BE(field))
            case let type: throw KeychainError.decode("\(field): attribute type \(type) is neither text nor integer")
            }
        }
        return attributes
    }

    /// An item's access list (gnome-keyring 2's per-application grants, no longer used): skipped.
    static func skipAccessList(_ reader: inout FieldReader, _ field: String) throws(KeychainError) {
        let count = Int(try reader.uint32BE(field))
        guard count <= reader.remaining / 20 else {
            throw KeychainError.decode("\(field): \(count) entries declared, more than the file holds")
        }
        for _ in 0..<count {
            _ = try reader.uint32BE(field)
            for _ in 0..<3 { _ = try string(&reader, field) }
            _ = try reader.uint32BE(field)
        }
    }
}
