package import FoundationEssentials
internal import LatchkeyCrypto
internal import LatchkeyPKI
internal import LatchkeyTPM

/// How a key held by the keychain is stored in its item's data: `"LKHK"`, format 1 (EC and RSA) or 2
/// (Ed25519, whose 32-byte public key can start with any byte), the public key's external representation
/// (2-byte big-endian length, then the bytes), then the private key's. No EC or RSA key's external
/// representation starts with `"L"` (EC starts with 0x04, RSA's DER with 0x30), and no Ed25519 key is ever
/// stored but in this form, so a held key is known by its data alone. Format 3 is a P-256 key made inside the
/// TPM: after the public point, in place of the private key, the TPM's wrapped object — the pinned storage
/// key's name, the object's public area and its private area (encrypted to that TPM), each a 2-byte
/// big-endian length and its bytes. The engine hands out only the public part (`publicPart`); the private
/// part is read by `KeychainDatabase.useHeldKey` and nothing else.
enum HeldKeyData {
    private static let magic: [UInt8] = Array("LKHK".utf8) + [1]
    private static let ed25519Magic: [UInt8] = Array("LKHK".utf8) + [2]
    private static let tpmMagic: [UInt8] = Array("LKHK".utf8) + [3]

    /// Whether `data` is a held key's.
    static func isHeld(_ data: Data) -> Bool {
        data.starts(with: magic) || data.starts(with: ed25519Magic) || data.starts(with: tpmMagic)
    }

    /// Whether `data` is a key made inside the TPM (format 3).
    static func isTPM(_ data: Data) -> Bool { data.starts(with: tpmMagic) }

    /// The stored form of a P-256 key the TPM whose storage key is named `primaryName` made.
    static func seal(_ key: TPMKeyObject, primaryName: Data) -> Data {
        var sealed = Data(tpmMagic)
        for field in [key.publicPoint, primaryName, key.object.public, key.object.private] {
            sealed.append(UInt8(field.count >> 8))
            sealed.append(UInt8(field.count & 0xff))
            sealed.append(field)
        }
        return sealed
    }

    /// The TPM's object inside a format-3 key's data, and the name of the storage key it was made under.
    static func tpmObject(_ data: Data) throws(KeychainError) -> (primaryName: Data, object: TPMSealedObject) {
        var fields: [Data] = []
        var offset = data.startIndex + tpmMagic.count
        while offset < data.endIndex {
            guard data.endIndex >= offset + 2 else { break }
            let length = Int(data[offset]) << 8 | Int(data[offset + 1])
            guard data.endIndex >= offset + 2 + length else { break }
            fields.append(Data(data[offset + 2..<offset + 2 + length]))
            offset += 2 + length
        }
        guard isTPM(data), offset == data.endIndex, fields.count == 4 else {
            throw KeychainError.decode("a TPM-made key's data is damaged (its TPM object is malformed)")
        }
        return (fields[1], TPMSealedObject(public: fields[2], private: fields[3]))
    }

    /// The stored form of `key` (a private key); the caller wipes it once stored.
    static func seal(_ key: AsymmetricKey) throws(KeychainError) -> Data {
        let external: SecureKeyBytes
        do {
            external = try key.externalRepresentation()
        } catch {
            throw KeychainError(.internal, "the new key cannot be encoded: \(error.reason)")
        }
        let publicData = key.publicKeyData
        var sealed = Data(capacity: magic.count + 2 + publicData.count + external.count)
        sealed.append(contentsOf: key.type == .ed25519 ? ed25519Magic : magic)
        sealed.append(UInt8(publicData.count >> 8))
        sealed.append(UInt8(publicData.count & 0xff))
        sealed.append(publicData)
        external.withUnsafeBytes { sealed.append(contentsOf: $0) }
        return sealed
    }

    /// The public key's external representation inside a held key's data; nil when the data is damaged.
    static func publicPart(_ data: Data) -> Data? {
        guard let (start, length) = publicRange(data) else { return nil }
        return Data(data[start..<start + length])
    }

    /// The key's type: Ed25519 by its format, else from its public key: an X9.63 point (0x04) is EC, PKCS #1
    /// DER (0x30) is RSA.
    static func type(_ data: Data) throws(KeychainError) -> KeyType {
        guard let (start, length) = publicRange(data), length > 0 else {
            throw KeychainError.decode("a held key's data is damaged")
        }
        if data.starts(with: ed25519Magic) { return .ed25519 }
        switch data[start] {
        case 0x04: return .ellipticCurve
        case 0x30: return .rsa
        default: throw KeychainError.decode("a held key's public key is neither an EC point nor RSA DER")
        }
    }

    /// The private key inside a held key's data.
    static func privateKey(_ data: Data, type: KeyType) throws(KeychainError) -> AsymmetricKey {
        guard !isTPM(data) else { throw KeychainError(.internal, "a TPM-made key's private key is in its TPM") }
        guard let (start, length) = publicRange(data), start + length < data.endIndex else {
            throw KeychainError.decode("a held key's data is damaged")
        }
        do {
            // Stored by the keychain and authenticated by its sealing: loaded without OpenSSL's costly checks.
            return try AsymmetricKey(storedPrivateKey: Data(data[(start + length)...]), type: type)
        } catch {
            throw KeychainError.decode("a held key's data is not its key: \(error.reason)")
        }
    }

    private static func publicRange(_ data: Data) -> (start: Int, length: Int)? {
        let header = data.startIndex + magic.count  // Both formats' headers are as long.
        guard isHeld(data), data.endIndex >= header + 2 else { return nil }
        let length = Int(data[header]) << 8 | Int(data[header + 1])
        guard data.endIndex >= header + 2 + length else { return nil }
        return (header + 2, length)
    }
}

/// The handle of an ephemeral held key (`HeldKeyRequest.isPermanent` false): `"lke1"` and 28 random bytes —
/// the length of a persistent reference, so it travels where one does, and never parsed as one.
package enum EphemeralKeyHandle {
    private static let magic = Data("lke1".utf8)
    static let length = 32

    static func make() -> Data { magic + SecureRandom.bytes(length - magic.count) }

    /// Whether `reference` is an ephemeral key's handle.
    package static func isHandle(_ reference: Data) -> Bool {
        reference.count == length && reference.prefix(4) == magic
    }
}
