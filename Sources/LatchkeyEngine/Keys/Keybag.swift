import Foundation
internal import LatchkeyCrypto

/// The keys of one keychain once unwrapped: a class key per accessibility class and the index key that keys
/// the digests of the searchable index.
struct KeyMaterial: Sendable {
    var classKeys: [Accessibility: SecureBytes]
    var indexKey: SecureBytes

    /// Fresh random keys for a new keychain.
    static func generate() -> KeyMaterial {
        var keys: [Accessibility: SecureBytes] = [:]
        for accessibility in Accessibility.allCases { keys[accessibility] = SecureBytes(randomCount: AEAD.keyLength) }
        return KeyMaterial(classKeys: keys, indexKey: SecureBytes(randomCount: KeyedDigest.keyLength))
    }

    /// The classes whose keys the device key also wraps, so they open without the passphrase.
    static let deviceTier: [Accessibility] = [.always, .alwaysThisDeviceOnly]
}

/// The plaintext layout of the two keybags (both are sealed with XChaCha20-Poly1305 before they are stored):
///
/// - the passphrase keybag: `"LKB1"`, then the seven class keys in `Accessibility.allCases` order, then
///   the index key (32 bytes each);
/// - the device keybag: `"LKD1"`, the `dk` and `dku` class keys, the index key.
enum KeybagFormat {
    private static let fullMagic = Array("LKB1".utf8)
    private static let deviceMagic = Array("LKD1".utf8)
    private static let keyLength = 32

    static func encodeFull(_ material: KeyMaterial) -> SecureBytes {
        encode(magic: fullMagic, keys: Accessibility.allCases.map { material.classKeys[$0]! } + [material.indexKey])
    }

    static func encodeDevice(_ material: KeyMaterial) -> SecureBytes {
        encode(magic: deviceMagic, keys: KeyMaterial.deviceTier.map { material.classKeys[$0]! } + [material.indexKey])
    }

    static func decodeFull(_ plaintext: SecureBytes) -> KeyMaterial? {
        guard let keys = decode(plaintext, magic: fullMagic, count: Accessibility.allCases.count + 1) else {
            return nil
        }
        var classKeys: [Accessibility: SecureBytes] = [:]
        for (index, accessibility) in Accessibility.allCases.enumerated() { classKeys[accessibility] = keys[index] }
        return KeyMaterial(classKeys: classKeys, indexKey: keys[keys.count - 1])
    }

    static func decodeDevice(_ plaintext: SecureBytes) -> KeyMaterial? {
        guard let keys = decode(plaintext, magic: deviceMagic, count: KeyMaterial.deviceTier.count + 1) else {
            return nil
        }
        var classKeys: [Accessibility: SecureBytes] = [:]
        for (index, accessibility) in KeyMaterial.deviceTier.enumerated() { classKeys[accessibility] = keys[index] }
        return KeyMaterial(classKeys: classKeys, indexKey: keys[keys.count - 1])
    }

    private static func encode(magic: [UInt8], keys: [SecureBytes]) -> SecureBytes {
        SecureBytes(count: magic.count + keys.count * keyLength) { out in
            magic.withUnsafeBytes { out.copyMemory(from: $0) }
            for (index, key) in keys.enumerated() {
                precondition(key.count == keyLength)
                let start = magic.count + index * keyLength
                key.withUnsafeBytes {
                    UnsafeMutableRawBufferPointer(rebasing: out[start..<(start + keyLength)]).copyMemory(from: $0)
                }
            }
        }
    }

    private static func decode(_ plaintext: SecureBytes, magic: [UInt8], count: Int) -> [SecureBytes]? {
        guard plaintext.count == magic.count + count * keyLength else { return nil }
        return plaintext.withUnsafeBytes { bytes -> [SecureBytes]? in
            guard bytes.prefix(magic.count).elementsEqual(magic) else { return nil }
            return (0..<count).map { index in
                let start = magic.count + index * keyLength
                return SecureBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + keyLength)]))
            }
        }
    }
}
