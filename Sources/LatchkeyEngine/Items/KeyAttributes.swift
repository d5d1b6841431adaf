package import FoundationEssentials
package import LatchkeyPKI

/// The attributes Apple's keychain stores for a key added by reference (`SecKeyCopyAttributeDictionary` of
/// a software key, `SecKey.m`): class, type, sizes, application label (SHA-1 of the public key), the
/// flags, and what it may be used for.
package enum KeyAttributes {
    /// `held`: the private key of `key` (which may be its public half) as the keychain holds it —
    /// sensitive, always sensitive, not extractable and never extractable, as Apple's token keys report
    /// (`SecCTKKey.m`).
    package static func derived(from key: AsymmetricKey, held: Bool = false) -> [AttributeKey: AttributeValue] {
        let isPrivate = key.isPrivate || held
        func flag(_ value: Bool) -> AttributeValue { .number(value ? 1 : 0) }
        var attributes: [AttributeKey: AttributeValue] = [
            .keyClass: .number(isPrivate ? 1 : 0), .applicationLabel: .data(key.applicationLabel),
            .isPermanent: flag(true), "priv": flag(true), "modi": flag(true),
            // Apple's types are numbers ("73", "42"); Ed25519's is Latchkey's own text.
            .type: Int64(key.type.rawValue).map(AttributeValue.number) ?? .string(key.type.rawValue),
            .keySizeInBits: .number(Int64(key.sizeInBits)), .effectiveKeySize: .number(Int64(key.sizeInBits)),
            "sens": flag(false), "asen": flag(false), "extr": flag(true), "next": flag(false),
            "encr": flag(!isPrivate), "decr": flag(isPrivate), "drve": flag(true), "sign": flag(isPrivate),
            "vrfy": flag(!isPrivate), "snrc": flag(false), "vyrc": flag(false), "wrap": flag(!isPrivate),
            "unwp": flag(isPrivate),
        ]
        if key.type == .ed25519 {  // A signing key only: no encryption, key exchange or wrapping.
            for name: AttributeKey in ["encr", "decr", "drve", "wrap", "unwp"] { attributes[name] = flag(false) }
        }
        if held {
            for name: AttributeKey in ["sens", "asen", "next"] { attributes[name] = flag(true) }
            attributes["extr"] = flag(false)
        }
        return attributes
    }

    /// The attributes a key named by `kSecValueRef` in a search, update or delete matches: its class,
    /// type, size and application label.
    package static func identifying(_ key: AsymmetricKey) -> [AttributeKey: AttributeValue] {
        derived(from: key).filter { [.keyClass, .type, .keySizeInBits, .applicationLabel].contains($0.key) }
    }

    /// The key a stored key item holds, from its data and its `kcls` and `type` attributes:
    /// `errSecUnimplemented` for a symmetric key (Latchkey has no symmetric key references), `errSecDecode`
    /// when the type is unknown or the bytes are not a key of that type.
    package static func key(data: Data, attributes: [AttributeKey: AttributeValue]) throws(KeychainError)
        -> AsymmetricKey
    {
        guard case .number(let keyClass)? = attributes[.keyClass], keyClass == 0 || keyClass == 1 else {
            throw KeychainError(
                .unimplemented,
                "only public and private keys have references; this key's class is \(attributes[.keyClass].map { "\($0)" } ?? "missing")"
            )
        }
        let typeCode: String? =
            switch attributes[.type] {
            case .number(let number)?: String(number)
            case .string(let text)?: text
            default: nil
            }
        guard let code = typeCode, let type = KeyType(rawValue: code) else {
            throw KeychainError.decode(
                "a key item's type is none of kSecAttrKeyTypeRSA, kSecAttrKeyTypeECSECPrimeRandom and Ed25519")
        }
        do {
            return try AsymmetricKey(externalRepresentation: data, type: type, isPrivate: keyClass == 1)
        } catch {
            throw KeychainError.decode("a key item's data is not its key: \(error.reason)")
        }
    }
}
