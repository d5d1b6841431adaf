package import FoundationEssentials
package import LatchkeyCrypto
package import LatchkeyEngine
internal import LatchkeyPOSIX

/// A vault's keys by id (1, 2… — a new one each time a device is removed); the newest seals new rows.
package struct VaultKeyring: Sendable {
    package private(set) var keys: [Int32: SecureBytes] = [:]

    package init() {}

    package var currentID: Int32 { keys.keys.max() ?? 0 }
    package var current: SecureBytes? { keys[currentID] }

    package subscript(id: Int32) -> SecureBytes? { keys[id] }

    package mutating func insert(_ key: SecureBytes, id: Int32) { keys[id] = key }
}

/// The vault's cryptography: items sealed under the vault key with their identity bound in, vault keys
/// delivered to devices (libsodium sealed boxes with a tag chaining each key to the one before), the
/// recovery code, the fingerprint both sides of a join compare, and the approval tags.
package enum VaultCrypto {
    /// Content is padded to a multiple of this, so a row's length tells little about its secret's.
    static let padding = 64

    // MARK: Items

    /// The associated data of an item's ciphertext: vault ‖ item ‖ version ‖ deleted ‖ key id ‖ author. The
    /// server cannot move a row to another item or vault, replay it as another version, turn it into a
    /// deletion (or back), or claim another author without the open failing.
    static func associatedData(vault: Data, itemID: Data, version: Int64, deleted: Bool, keyID: Int32, author: Data)
        -> [UInt8]
    {
        // Bytes, not `Data`: appending one `Data` to another cost more than the AEAD open it is made for.
        var data: [UInt8] = []
        data.reserveCapacity(4 + vault.count + itemID.count + 8 + 1 + 4 + author.count)
        data.append(contentsOf: "LKS1".utf8)
        vault.withUnsafeBytes { data.append(contentsOf: $0) }
        itemID.withUnsafeBytes { data.append(contentsOf: $0) }
        withUnsafeBytes(of: version.bigEndian) { data.append(contentsOf: $0) }
        data.append(deleted ? 1 : 0)
        withUnsafeBytes(of: keyID.bigEndian) { data.append(contentsOf: $0) }
        author.withUnsafeBytes { data.append(contentsOf: $0) }
        return data
    }

    /// Seals a record as this device's row.
    package static func seal(_ record: SyncRecord, vault: Data, keyID: Int32, key: SecureBytes, author: Data)
        -> SyncEnvelope
    {
        var content = record.encodedContent()
        content.append(0x80)
        content.append(contentsOf: repeatElement(0, count: (padding - content.count % padding) % padding))
        let ad = associatedData(
            vault: vault, itemID: record.itemID, version: record.version, deleted: record.deleted,
            keyID: keyID, author: author)
        let ciphertext = AEAD.seal(content, key: key, associatedData: ad)
        content.withUnsafeMutableBytes { wipeBytes($0) }
        return SyncEnvelope(
            sequence: 0, itemID: record.itemID, version: record.version, deleted: record.deleted, keyID: keyID,
            ciphertext: ciphertext, author: author)
    }

    /// Opens a row: errSecDecode naming what is wrong (unknown key, failed authentication, bad content).
    package static func open(_ envelope: SyncEnvelope, vault: Data, keyring: VaultKeyring) throws(KeychainError)
        -> SyncRecord
    {
        guard let key = keyring[envelope.keyID] else {
            throw KeychainError.decode(
                "it is sealed under vault key \(envelope.keyID), which this device does not hold")
        }
        let ad = associatedData(
            vault: vault, itemID: envelope.itemID, version: envelope.version, deleted: envelope.deleted,
            keyID: envelope.keyID, author: envelope.author)
        var content: Data
        do {
            content = try AEAD.open(envelope.ciphertext, key: key, associatedData: ad)
        } catch {
            throw KeychainError.decode(
                "its ciphertext failed authentication (altered, or moved from another item, version or vault)")
        }
        defer { content.withUnsafeMutableBytes { wipeBytes($0) } }
        // The padding is found on the raw bytes: a `Data` walked from its end checks its storage per byte.
        let length = content.withUnsafeBytes { bytes -> Int? in
            guard let end = bytes.lastIndex(where: { $0 != 0 }), bytes[end] == 0x80 else { return nil }
            return end
        }
        guard let length else { throw KeychainError.decode("its content is not padded") }
        return try SyncRecord(
            itemID: envelope.itemID, version: envelope.version, deleted: envelope.deleted,
            content: Data(content.prefix(length)))
    }

    // MARK: Vault keys

    /// A vault key sealed to a device's public key. The plaintext binds vault and key id and carries a tag
    /// under `authKey` (the previous vault key; for key 1, the recovery code's tag key, or none when handed
    /// to an approved device — the fingerprint check covers that one).
    package static func deliver(_ key: SecureBytes, id: Int32, vault: Data, to publicKey: Data, authKey: SecureBytes?)
        throws(KeychainError) -> Data
    {
        let tag = deliveryTag(key, id: id, vault: vault, publicKey: publicKey, authKey: authKey)
        let header = Data("LKVK".utf8) + vault + withUnsafeBytes(of: id.bigEndian) { Data($0) }
        let plaintext = SecureBytes(count: header.count + key.count + tag.count, lifetime: .transient) { out in
            header.copyBytes(to: UnsafeMutableRawBufferPointer(rebasing: out[0..<header.count]))
            key.withUnsafeBytes {
                UnsafeMutableRawBufferPointer(rebasing: out[header.count..<(header.count + key.count)]).copyMemory(
                    from: $0)
            }
            tag.copyBytes(to: UnsafeMutableRawBufferPointer(rebasing: out[(header.count + key.count)...]))
        }
        do {
            return try BoxKeyPair.seal(plaintext, to: publicKey)
        } catch {
            throw KeychainError.param("a device's public key is malformed")
        }
    }

    /// Opens a delivered vault key and checks its vault, id and tag (errSecAuthFailed when any is wrong).
    package static func receive(_ box: Data, id: Int32, vault: Data, keyPair: BoxKeyPair, authKey: SecureBytes?)
        throws(KeychainError) -> SecureBytes
    {
        let plaintext: SecureBytes
        do {
            plaintext = try keyPair.open(box)
        } catch {
            throw SyncFailure.forgedKey.error(.authFailed, "vault key \(id) was not sealed to this device's key")
        }
        let header = Data("LKVK".utf8) + vault + withUnsafeBytes(of: id.bigEndian) { Data($0) }
        guard plaintext.count == header.count + AEAD.keyLength + 32 else {
            throw SyncFailure.forgedKey.error(.authFailed, "vault key \(id) is malformed")
        }
        let (matches, tag) = plaintext.withUnsafeBytes { bytes in
            (Data(bytes[0..<header.count]) == header, Data(bytes[(header.count + AEAD.keyLength)...]))
        }
        guard matches else {
            throw SyncFailure.forgedKey.error(.authFailed, "vault key \(id) belongs to another vault or id")
        }
        let key = plaintext.withUnsafeBytes {
            SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[header.count..<(header.count + AEAD.keyLength)]))
        }
        guard
            constantTimeEqual(
                tag, deliveryTag(key, id: id, vault: vault, publicKey: keyPair.publicKey, authKey: authKey))
        else {
            throw SyncFailure.forgedKey.error(
                .authFailed,
                "vault key \(id) does not carry the tag of the key before it: the server may have forged it")
        }
        return key
    }

    private static func deliveryTag(_ key: SecureBytes, id: Int32, vault: Data, publicKey: Data, authKey: SecureBytes?)
        -> Data
    {
        guard let authKey else { return Data(count: 32) }
        var message = Data("LKVK-tag".utf8) + vault + withUnsafeBytes(of: id.bigEndian) { Data($0) } + publicKey
        key.withUnsafeBytes { message.append(contentsOf: $0) }
        defer { message.withUnsafeMutableBytes { wipeBytes($0) } }
        return KeyedDigest.digest(message, key: authKey)
    }

    // MARK: Devices

    /// The approval tag of a device (key id ‖ BLAKE2b under that vault key): the server, without the vault
    /// key, cannot make a device of its own look approved.
    package static func approval(vault: Data, device: Data, publicKey: Data, keyID: Int32, key: SecureBytes) -> Data {
        withUnsafeBytes(of: keyID.bigEndian) { Data($0) }
            + KeyedDigest.digest(Data("LKDA".utf8) + vault + device + publicKey, key: key)
    }

    /// Whether `approval` is a valid tag for the device under a key of `keyring`.
    package static func isApproved(_ device: ServerDevice, vault: Data, keyring: VaultKeyring) -> Bool {
        guard let approval = device.approval, approval.count == 36 else { return false }
        let keyID = approval.prefix(4).reduce(Int32(0)) { ($0 << 8) | Int32($1) }
        guard let key = keyring[keyID] else { return false }
        return constantTimeEqual(
            approval,
            Self.approval(vault: vault, device: device.id, publicKey: device.publicKey, keyID: keyID, key: key))
    }

    /// The code a joining device shows and the approving device asks for: six digits from its public key.
    package static func joinCode(vault: Data, publicKey: Data) -> String {
        digits(KeyedDigest.digest(Data("LKJC".utf8) + publicKey, key: SecureBytes(copying: Array(vault + vault))))
    }

    /// The vault's fingerprint (six digits from vault key 1): every device shows the same; a joined device
    /// that shows another got its key from someone else than the vault's devices.
    package static func fingerprint(vault: Data, firstKey: SecureBytes) -> String {
        digits(KeyedDigest.digest(Data("LKFP".utf8) + vault, key: firstKey))
    }

    private static func digits(_ digest: some Collection<UInt8>) -> String {
        let number = digest.prefix(4).reduce(UInt32(0)) { ($0 << 8) | UInt32($1) } % 1_000_000
        let text = String(number)
        let padded = String(repeating: "0", count: 6 - text.count) + text
        return padded.prefix(3) + "-" + padded.suffix(3)
    }

    // MARK: Recovery code

    private static let alphabet = Array("ABCDEFGHJKMNPQRSTVWXYZ0123456789".utf8)  // Crockford-like: no I, L, O, U.

    /// A new recovery code: 160 random bits as eight groups of four characters.
    package static func newRecoveryCode() -> String {
        let bytes = SecureBytes(randomCount: 20, lifetime: .transient)
        var characters: [Character] = []
        bytes.withUnsafeBytes { raw in
            var accumulator = 0
            var bits = 0
            for byte in raw {
                accumulator = (accumulator << 8) | Int(byte)
                bits += 8
                while bits >= 5 {
                    bits -= 5
                    characters.append(Character(UnicodeScalar(alphabet[(accumulator >> bits) & 31])))
                }
                accumulator &= (1 << bits) - 1
            }
        }
        return stride(from: 0, to: characters.count, by: 4).map {
            String(characters[$0..<min($0 + 4, characters.count)])
        }
        .joined(separator: "-")
    }

    /// The key pair and tag key a recovery code derives for a vault; errSecParam when it is not a code.
    package static func recoveryKeys(code: String, vault: Data) throws(KeychainError) -> (
        keyPair: BoxKeyPair, tagKey: SecureBytes
    ) {
        var value: [UInt8] = []
        var accumulator = 0
        var bits = 0
        for character in code.uppercased().utf8 where character != UInt8(ascii: "-") && character != UInt8(ascii: " ") {
            guard let digit = alphabet.firstIndex(of: character) else {
                throw SyncFailure.wrongRecoveryCode.error(
                    .param, "the recovery code has a character that is not in recovery codes")
            }
            accumulator = (accumulator << 5) | digit
            bits += 5
            if bits >= 8 {
                bits -= 8
                value.append(UInt8((accumulator >> bits) & 0xFF))
            }
            accumulator &= (1 << bits) - 1
        }
        guard value.count == 20 else {
            throw SyncFailure.wrongRecoveryCode.error(.param, "a recovery code has 32 characters")
        }
        let secret = SecureBytes(copying: value)
        value.withUnsafeMutableBytes { wipeBytes($0) }
        let seed = KeyedDigest.secureDigest(
            of: SecureBytes(copying: Array("LKRC-box".utf8) + Array(vault)), key: secret)
        let tagKey = KeyedDigest.secureDigest(
            of: SecureBytes(copying: Array("LKRC-tag".utf8) + Array(vault)), key: secret)
        return (BoxKeyPair(seed: seed), tagKey)
    }

}
