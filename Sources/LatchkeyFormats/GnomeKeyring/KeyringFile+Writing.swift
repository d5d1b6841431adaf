import FoundationEssentials
import LatchkeyCrypto
package import LatchkeyEngine
import LatchkeyPKI

extension KeyringFile {
    /// The hash iterations Latchkey writes (gnome-keyring writes 1,000 to 4,095, and its own count again the
    /// next time it saves the keyring).
    package static let writtenIterations: UInt32 = 65_536

    /// The file's bytes, encrypted with `password`: what gnome-keyring-daemon unlocks and serves when the file
    /// is in its keyrings directory. Text must be UTF-8 without NUL characters (`errSecParam` names the
    /// item otherwise); secrets may hold any bytes.
    package func written(password: Passphrase, iterations: UInt32 = writtenIterations) throws(KeychainError)
        -> [UInt8]
    {
        var salt = [UInt8](repeating: 0, count: 8)
        salt.withUnsafeMutableBytes { SecureRandom.fill($0) }
        var header = FieldWriter()
        header.append(Self.magic)
        header.append([0, 0, 0, 0])
        try Self.append(name, to: &header, "the keyring's name")
        Self.append(modified, to: &header)
        Self.append(created, to: &header)
        header.uint32BE(0)  // Flags: no locking on idle or after a time.
        header.uint32BE(0)
        header.uint32BE(iterations)
        header.append(salt)
        for _ in 0..<4 { header.uint32BE(0) }
        header.uint32BE(UInt32(items.count))
        let sortedItems = items.map { item in (item, item.attributes.sorted { $0.key < $1.key }) }
        for (index, (item, attributes)) in sortedItems.enumerated() {
            header.uint32BE(UInt32(index + 1))
            header.uint32BE(Self.schemas.first { $0.value == item.attributes["xdg:schema"] }?.key ?? 0)
            header.uint32BE(UInt32(attributes.count))
            for (name, value) in attributes {
                try Self.append(name, to: &header, "item \(index + 1)'s attribute name")
                header.uint32BE(0)
                let hashed = Array(value.utf8).withUnsafeBytes { FormatPrimitives.md5([$0]) }
                try Self.append(Hex.encode(hashed), to: &header, "a hash")
            }
        }
        var inner = FieldWriter()
        defer { inner.wipe() }
        inner.append([UInt8](repeating: 0, count: 16))
        for (index, (item, attributes)) in sortedItems.enumerated() {
            let name = "item \(index + 1) (\"\(item.label)\")"
            try Self.append(item.label, to: &inner, "\(name)'s label")
            guard item.secret.count < 0x7FFF_FFFF else { throw KeychainError.param("\(name)'s secret is too large") }
            inner.uint32BE(UInt32(item.secret.count))
            inner.append(item.secret)
            Self.append(item.created, to: &inner)
            Self.append(item.modified, to: &inner)
            inner.uint32BE(0xFFFF_FFFF)  // The reserved string: none.
            for _ in 0..<4 { inner.uint32BE(0) }
            inner.uint32BE(UInt32(attributes.count))
            for (key, value) in attributes {
                try Self.append(key, to: &inner, "\(name)'s attribute name")
                inner.uint32BE(0)
                try Self.append(value, to: &inner, "\(name)'s attribute \(key)")
            }
            inner.uint32BE(0)  // No access list.
        }
        while inner.bytes.count % 16 != 0 { inner.append(0) }
        var plain = inner.bytes
        defer { wipe(&plain) }
        let checksum = plain.withUnsafeBytes { FormatPrimitives.md5([UnsafeRawBufferPointer(rebasing: $0[16...])]) }
        plain.replaceSubrange(0..<16, with: checksum)
        let (key, iv) = try Self.keyAndIV(password, salt: salt[...], iterations: iterations)
        guard
            let encrypted = plain.withUnsafeBytes({
                FormatPrimitives.aesCBC(encrypt: true, key: key, iv: iv, input: $0, padding: false)
            })
        else { throw KeychainError(.internal, "AES-128-CBC failed in OpenSSL") }
        header.uint32BE(UInt32(encrypted.count))
        encrypted.withUnsafeBytes { header.append($0) }
        return header.bytes
    }

    static func append(_ text: String, to writer: inout FieldWriter, _ field: String) throws(KeychainError) {
        let bytes = Array(text.utf8)
        guard !bytes.contains(0) else { throw KeychainError.param("\(field) holds a NUL character") }
        guard bytes.count < 0x7FFF_FFFF else { throw KeychainError.param("\(field) is too long") }
        writer.uint32BE(UInt32(bytes.count))
        writer.append(bytes)
    }

    static func append(_ date: Date, to writer: inout FieldWriter) {
        let seconds = UInt64(bitPattern: Int64(date.timeIntervalSince1970.rounded(.down)))
        writer.uint32BE(UInt32(truncatingIfNeeded: seconds >> 32))
        writer.uint32BE(UInt32(truncatingIfNeeded: seconds))
    }
}
