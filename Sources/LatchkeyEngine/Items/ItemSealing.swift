import FoundationEssentials
internal import LatchkeyCrypto

/// Encrypts and decrypts items. Each item has its own random key, sealed under the class key of its
/// accessibility; the attributes and the secret are sealed under the item key. The associated data binds
/// each ciphertext to its row, so an edited, swapped or moved row fails to open (errSecDecode) instead of
/// yielding wrong plaintext:
///
/// - item key: AD = `lk1/key ‖ id ‖ class ‖ agrp digest ‖ pdmn ‖ sync ‖ tomb ‖ version ‖ has data ‖
///   primary-key digest ‖ index digests [‖ "acl" ‖ access-control flags, when not 0]` — every plaintext
///   column of the row. Unwrapping the key proves the
///   row is as it was sealed, so a lookup needs neither the attributes decrypted nor a digest recomputed.
///   (Sync re-wraps the key under a sync key with its own associated data; these local digests never leave
///   the device.)
/// - attributes: AD = `lk1/attrs ‖ id ‖ class ‖ version`: an older attribute blob restored into the row
///   does not open.
/// - secret: AD = `lk1/data ‖ id ‖ class`. A new secret always gets a new item key, so an older secret
///   ciphertext restored into the row does not open either.
enum ItemSealing {
    static func keyAssociatedData(_ row: ItemRow) -> [UInt8] {
        var writer = ByteWriter(capacity: 160)
        writer.appendRaw("lk1/key".utf8)
        writer.appendField(row.id)
        writer.appendField(row.itemClass.rawValue)
        writer.appendField(row.groupDigest)
        writer.appendField(row.accessibility.rawValue)
        writer.append(row.synchronizable ? 1 as UInt8 : 0)
        writer.append(row.tombstone ? 1 as UInt8 : 0)
        writer.append(row.version)
        writer.append(row.hasData ? 1 as UInt8 : 0)
        writer.appendField(row.primaryKeyDigest)
        writer.append(UInt32(row.indexDigestCount))
        writer.appendRaw(row.indexBlob)  // The digests one after another.
        // Format v3: the access-control flags, only when there are some (rows sealed before keep their AD).
        if row.accessControlFlags != 0 {
            writer.appendRaw("acl".utf8)
            writer.append(UInt64(row.accessControlFlags))
        }
        return writer.bytes
    }

    static func attributesAssociatedData(_ row: ItemRow) -> [UInt8] {
        var writer = ByteWriter(capacity: 48)
        writer.appendRaw("lk1/attrs".utf8)
        writer.appendField(row.id)
        writer.appendField(row.itemClass.rawValue)
        writer.append(row.version)
        return writer.bytes
    }

    static func dataAssociatedData(_ row: ItemRow) -> [UInt8] {
        var writer = ByteWriter(capacity: 40)
        writer.appendRaw("lk1/data".utf8)
        writer.appendField(row.id)
        writer.appendField(row.itemClass.rawValue)
        return writer.bytes
    }

    static func newItemKey() -> SecureBytes { SecureBytes(randomCount: AEAD.keyLength, lifetime: .transient) }

    /// Seals the item key into `row.wrappedKey`. Call it last: its associated data covers every column.
    static func wrap(_ itemKey: SecureBytes, into row: inout ItemRow, classKey: SecureBytes) {
        row.wrappedKey = AEAD.seal(itemKey, key: classKey, associatedData: keyAssociatedData(row))
    }

    /// Seals the secret and then the attributes (whose associated data says whether there is a secret).
    static func seal(
        attributes: [AttributeKey: AttributeValue], data: Data?, into row: inout ItemRow, itemKey: SecureBytes
    ) {
        row.sealedData = data.map { AEAD.seal($0, key: itemKey, associatedData: dataAssociatedData(row)) }
        row.hasData = data != nil
        seal(attributes: attributes, into: &row, itemKey: itemKey)
    }

    /// Seals the attributes into `row.sealedAttributes`, wiping the plaintext encoding afterwards. Use it
    /// alone only when the secret's ciphertext stays as it is.
    static func seal(attributes: [AttributeKey: AttributeValue], into row: inout ItemRow, itemKey: SecureBytes) {
        // Sealed from the writer's own bytes, which are then wiped: before, a `Data` copy of them was sealed and
        // wiped and the writer's buffer freed as it was. (A buffer the writer outgrows is still freed unwiped.)
        var plaintext = ByteWriter(capacity: 256)
        AttributeBlob.encode(attributes, into: &plaintext)
        let associatedData = attributesAssociatedData(row)
        row.sealedAttributes = plaintext.bytes.withUnsafeBytes { bytes in
            associatedData.withUnsafeBytes { AEAD.seal(bytes, key: itemKey, associatedData: $0) }
        }
        plaintext.wipe()
    }

    static func unwrapKey(_ row: ItemRow, classKey: SecureBytes) throws(KeychainError) -> SecureBytes {
        do {
            let key = try AEAD.openKey(
                row.wrappedKey, key: classKey, associatedData: keyAssociatedData(row), lifetime: .transient)
            guard key.count == AEAD.keyLength else { throw KeychainError.decode("item key has the wrong length") }
            return key
        } catch let error as KeychainError {
            throw error
        } catch {
            throw KeychainError.decode("an item's key failed authentication; the item is damaged")
        }
    }

    static func openAttributes(_ row: ItemRow, itemKey: SecureBytes) throws(KeychainError)
        -> [AttributeKey: AttributeValue]
    {
        let plaintext: Data
        do {
            plaintext = try AEAD.open(row.sealedAttributes, key: itemKey, associatedData: attributesAssociatedData(row))
        } catch {
            throw KeychainError.decode("an item's attributes failed authentication; the item is damaged")
        }
        guard let attributes = AttributeBlob.decode(plaintext) else {
            throw KeychainError.decode("an item's attributes are malformed")
        }
        return attributes
    }

    static func openData(_ row: ItemRow, itemKey: SecureBytes) throws(KeychainError) -> Data? {
        guard row.hasData else { return nil }
        guard let sealed = row.sealedData else {
            throw KeychainError.decode("an item's data is missing from its row")
        }
        do {
            return try AEAD.open(sealed, key: itemKey, associatedData: dataAssociatedData(row))
        } catch {
            throw KeychainError.decode("an item's data failed authentication; the item is damaged")
        }
    }
}
