import FoundationEssentials
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

    /// The classes a recovery code opens: every class that is not ThisDeviceOnly (those are bound to this
    /// machine — by the device key, which the TPM seals — and are not recovered on another).
    static let recoveryClasses = Accessibility.allCases.filter { !$0.isThisDeviceOnly }
    /// The ThisDeviceOnly classes, which the device-only keybag holds under the device key.
    static let deviceOnlyClasses = Accessibility.allCases.filter(\.isThisDeviceOnly)
    private static let recoveryMagic = Array("LKR1".utf8)
    private static let deviceOnlyMagic = Array("LKO1".utf8)

    /// The recovery keybag's plaintext: `"LKR1"`, the non-ThisDeviceOnly class keys in `allCases` order, the
    /// index key.
    static func encodeRecovery(_ material: KeyMaterial) -> SecureBytes {
        encode(magic: recoveryMagic, keys: recoveryClasses.map { material.classKeys[$0]! } + [material.indexKey])
    }

    /// The device-only keybag's plaintext: `"LKO1"`, the ThisDeviceOnly class keys in `allCases` order.
    static func encodeDeviceOnly(_ material: KeyMaterial) -> SecureBytes {
        encode(magic: deviceOnlyMagic, keys: deviceOnlyClasses.map { material.classKeys[$0]! })
    }

    /// The keys a recovery keybag holds, with the ThisDeviceOnly ones from `deviceOnly` (its plaintext) when
    /// the device key could be had, else fresh (the items of those classes then stay unreadable, each failing
    /// alone with errSecDecode, as ThisDeviceOnly items do not come along to another device).
    static func decodeRecovery(_ plaintext: SecureBytes, deviceOnly: SecureBytes?) -> (
        material: KeyMaterial, keptDeviceOnly: Bool
    )? {
        guard let keys = decode(plaintext, magic: recoveryMagic, count: recoveryClasses.count + 1) else { return nil }
        var classKeys: [Accessibility: SecureBytes] = [:]
        for (index, accessibility) in recoveryClasses.enumerated() { classKeys[accessibility] = keys[index] }
        var kept = false
        if let deviceOnly, let own = decode(deviceOnly, magic: deviceOnlyMagic, count: deviceOnlyClasses.count) {
            for (index, accessibility) in deviceOnlyClasses.enumerated() { classKeys[accessibility] = own[index] }
            kept = true
        } else {
            for accessibility in deviceOnlyClasses {
                classKeys[accessibility] = SecureBytes(randomCount: AEAD.keyLength)
            }
        }
        return (KeyMaterial(classKeys: classKeys, indexKey: keys[keys.count - 1]), kept)
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
