package import FoundationEssentials
internal import LatchkeyCrypto

/// An encrypted backup of keychain items, for moving them to another machine (`latchkey export` and
/// `import`). It has its own passphrase: Argon2id (parameters and salt in the header) derives the key, and
/// XChaCha20-Poly1305 seals the whole payload with the header as associated data, so a changed byte, a
/// truncated file or a wrong passphrase is detected before anything is imported.
///
/// Layout: `"LKBACKUP"`, format version (1 byte), KDF record (33 bytes), sealed payload. The payload is the
/// item count, then for each item its class, its attributes (the encoding of the keychain's own attribute
/// blob, with `agrp`, `pdmn`, `sync`, `cdat`, `mdat`) and its data — and, from format 2 (issue 53), its access
/// list: the entry count, then each entry as the keychain seals it (`AccessListEntry.encoded()`). Format 1
/// backups are still read (their items have empty lists).
package enum KeychainBackup {
    /// One item in a backup.
    package struct Item: Sendable, Hashable {
        /// The class.
        package let itemClass: ItemClass
        /// Every attribute, bookkeeping ones included.
        package let attributes: [AttributeKey: AttributeValue]
        /// The secret.
        package let data: Data?
        /// The programs its access list names (this machine's identities: see `restore`).
        package let accessList: [AccessListEntry]

        /// Creates an item.
        package init(
            itemClass: ItemClass, attributes: [AttributeKey: AttributeValue], data: Data?,
            accessList: [AccessListEntry] = []
        ) {
            self.itemClass = itemClass
            self.attributes = attributes
            self.data = data
            self.accessList = accessList
        }
    }

    private static let magic = Array("LKBACKUP".utf8)
    /// The format written; format 1 (no access lists) is read too.
    private static let format: UInt8 = 2
    /// A backup larger than this is refused (it would not fit a keychain's limits anyway).
    package static let maximumBytes = 1 << 31

    /// Seals `items` under `passphrase`.
    package static func seal(_ items: [Item], passphrase: Passphrase, keyDerivation: KeyDerivation = .default)
        throws(KeychainError) -> Data
    {
        guard passphrase.byteCount > 0 else { throw KeychainError.param("the backup passphrase must not be empty") }
        try keyDerivation.validate()
        let kdf = KDFRecord.fresh(.argon2id13, parameters: keyDerivation.parameters)
        var header = ByteWriter(capacity: 64)
        header.appendRaw(magic)
        header.append(format)
        header.appendRaw(kdf.encoded())
        var payload = encodePayload(items)
        let key = try kdf.deriveMasterKey(from: passphrase).wrapKey
        let sealed = AEAD.seal(payload.data, key: key, associatedData: header.bytes)
        payload.removeAll()
        return header.data + sealed
    }

    /// Opens a backup: `errSecAuthFailed` for a wrong passphrase or a damaged file (the two cannot be told
    /// apart), `errSecDecode` for a file that is not a Latchkey backup, `errSecParam` for absurd sizes.
    package static func open(_ backup: Data, passphrase: Passphrase) throws(KeychainError) -> [Item] {
        let (header, kdf) = try parseHeader(backup)
        let version = header[header.startIndex + magic.count]
        let key = try kdf.deriveMasterKey(from: passphrase).wrapKey
        var payload: Data
        do {
            payload = try AEAD.open(Data(backup.dropFirst(header.count)), key: key, associatedData: header)
        } catch {
            throw KeychainError(.authFailed, "wrong backup passphrase, or the backup is damaged")
        }
        defer { payload.withUnsafeMutableBytes { wipeBytes($0) } }
        return try parsePayload(payload, format: version)
    }

    /// The key derivation a backup asks for, read from its header without deriving anything — so a caller
    /// can refuse (or ask before) spending more memory and time on it than its own keychain needs.
    package static func keyDerivation(of backup: Data) throws(KeychainError) -> KeyDerivation {
        KeyDerivation(try parseHeader(backup).kdf.parameters)
    }

    /// Checks everything before the key derivation: size, magic, format and KDF parameters within bounds.
    /// Returns the header (the associated data of the sealed payload) and the KDF record.
    static func parseHeader(_ backup: Data) throws(KeychainError) -> (header: Data, kdf: KDFRecord) {
        let headerLength = magic.count + 1 + 33
        guard backup.count <= maximumBytes else { throw KeychainError.param("the backup is larger than 2 GiB") }
        guard backup.count >= headerLength + AEAD.overhead, Array(backup.prefix(magic.count)) == magic else {
            throw KeychainError.decode("this is not a Latchkey backup")
        }
        guard (1...format).contains(backup[backup.startIndex + magic.count]) else {
            throw KeychainError.decode(
                "the backup has format \(backup[backup.startIndex + magic.count]); this Latchkey reads formats 1 to \(format)"
            )
        }
        let header = Data(backup.prefix(headerLength))
        guard let kdf = KDFRecord.decode(Data(header.suffix(33))), kdf.algorithm == .argon2id13,
            kdf.parameters.isWithinBounds
        else { throw KeychainError.decode("the backup's key derivation parameters are malformed or out of range") }
        return (header, kdf)
    }

    /// The plaintext payload: the item count, then each item's class, attributes, data flag and data.
    static func encodePayload(_ items: [Item]) -> ByteWriter {
        var payload = ByteWriter(capacity: 256 * items.count + 8)
        payload.append(UInt32(items.count))
        for item in items {
            payload.appendField(item.itemClass.rawValue)
            payload.appendField(AttributeBlob.encode(item.attributes))
            payload.append(item.data == nil ? 0 as UInt8 : 1)
            payload.appendField(item.data ?? Data())
            payload.append(UInt32(item.accessList.count))
            for entry in item.accessList { payload.appendField(entry.encoded()) }
        }
        return payload
    }

    static func parsePayload(_ payload: Data, format: UInt8 = format) throws(KeychainError) -> [Item] {
        let parsed: [Item]? = payload.withUnsafeBytes { buffer -> [Item]? in
            var reader = ByteReader(buffer)
            do {
                let count = Int(try reader.readUInt32())
                guard count <= buffer.count / 8 else { return nil }
                var items: [Item] = []
                items.reserveCapacity(count)
                for _ in 0..<count {
                    guard let itemClass = ItemClass(rawValue: try reader.readText()),
                        let attributes = AttributeBlob.decode(try reader.readField())
                    else { return nil }
                    let hasData = try reader.readByte()
                    let data = try reader.readField()
                    guard hasData <= 1 else { return nil }
                    var accessList: [AccessListEntry] = []
                    if format >= 2 {
                        let entries = Int(try reader.readUInt32())
                        guard entries <= buffer.count / 8 else { return nil }
                        for _ in 0..<entries {
                            guard let entry = AccessListEntry.decode(try reader.readField()) else { return nil }
                            accessList.append(entry)
                        }
                    }
                    items.append(
                        Item(
                            itemClass: itemClass, attributes: attributes, data: hasData == 1 ? data : nil,
                            accessList: accessList))
                }
                return reader.isAtEnd ? items : nil
            } catch {
                return nil  // Reported below as errSecDecode.
            }
        }
        guard let parsed else { throw KeychainError.decode("the backup's contents are malformed") }
        return parsed
    }
}
